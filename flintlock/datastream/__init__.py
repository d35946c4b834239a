"""The PyFlink-compatible DataStream API (issue 5)."""
