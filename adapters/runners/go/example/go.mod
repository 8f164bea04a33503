module example.invalid/stella-conform-runner-example

go 1.19

require example.invalid/stella-conform/adapters/runners/go v0.0.0

replace example.invalid/stella-conform/adapters/runners/go => ../
