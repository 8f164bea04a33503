"""The whole stella conformance suite, in-process, as part of mini_stella's own tests."""

from mini_stella import StreamError, read

from stella_conform.pytest_plugin import conformance_tests

test_mini_stella_conformance = conformance_tests(read, examples=5, rejects=StreamError)


def test_mini_stella_reads_the_final_text():
    stream = [
        b'{"type":"text","text":"hi"}\n',
        b'{"type":"run_complete","model":"m","cost_usd":0}\n',
    ]
    assert read(stream)["final_text"] == "hi"
