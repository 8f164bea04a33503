module stella-adapter

go 1.19
