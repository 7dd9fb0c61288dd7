module example.com/docverify-scenario

go 1.19
