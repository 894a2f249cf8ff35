module modelfs.dev/integration-tests/go

go 1.19
