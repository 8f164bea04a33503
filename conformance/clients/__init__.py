"""What runs a client: one supervised process, the adapter protocol, the three modes, and
the in-process road for Python parsers."""
