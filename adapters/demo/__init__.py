"""Demo tasks and the tiny offline model used by the quick start, the mini trainer's demo and the tests."""
