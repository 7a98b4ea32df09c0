"""Reference test suites run against this package's factories (fetched at test time)."""
