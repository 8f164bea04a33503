module stella-broken

go 1.19
