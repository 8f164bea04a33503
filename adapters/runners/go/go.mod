module example.invalid/stella-conform/adapters/runners/go

go 1.19
