"""Real parts the tests and benchmarks run against (servers on 127.0.0.1, never mocks)."""
