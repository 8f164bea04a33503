"""The options model (stella_conform.options): every option is set by each source, or the
model says why that source cannot; each source sets an option; one bad number reads alike
from every source; a client's pyproject.toml gives ``run`` its defaults."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest
from conftest import kit_inline

from stella_conform.options.model import BY_NAME, OPTIONS, Cli, Ini, InMatrix, Option, Source, Unset

pytest_plugins = ["pytester"]


@pytest.mark.parametrize("option", OPTIONS, ids=[o.name for o in OPTIONS])
@pytest.mark.parametrize("source", list(Source), ids=[s.name for s in Source])
def test_every_option_is_set_by_each_source_or_says_why_not(option: Option, source: Source) -> None:
    """A new option is offered by every source, or refused by one for a stated reason."""
    where = option.source(source)
    if isinstance(where, Unset):
        assert where.reason.strip(), f"{option.name}: {source.value} refuses it without a reason"
        return
    expected = {Source.CLI: Cli, Source.INI: Ini, Source.MATRIX: InMatrix, Source.PYPROJECT: str}
    assert isinstance(where, expected[source]), (option, source)


def _commands() -> dict[str, click.Command]:
    from stella_conform.cli import main

    out: dict[str, click.Command] = {}
    for name, command in main.commands.items():
        out[name] = command
        if isinstance(command, click.Group):
            out.update({f"{name} {sub}": c for sub, c in command.commands.items()})
    return out


@pytest.mark.parametrize(
    "option", [o for o in OPTIONS if isinstance(o.cli, Cli)], ids=lambda o: o.name
)
def test_each_command_line_option_is_on_the_commands_the_model_names(option: Option) -> None:
    cli = option.cli
    commands = _commands()
    for command in cli.commands:
        found = commands[command if command != "corpus" else "corpus export"]
        flags = {f for p in found.params for f in (*p.opts, *p.secondary_opts)}
        wanted = {f for spec in cli.flags for f in spec.split("/") if f.startswith("-")}
        assert wanted <= flags, f"{command} lacks {wanted - flags}"


def test_each_ini_name_of_the_model_is_the_plugins() -> None:
    from stella_conform.pytest_plugin import STELLA_OPTIONS

    names = {f"stella_{n.replace('-', '_')}" for n, _, _ in STELLA_OPTIONS}
    model = {n for o in OPTIONS if isinstance(o.ini, Ini) for n, _, _ in o.ini.names}
    assert names == model


def test_each_matrix_key_of_the_model_is_read_by_load_config(tmp_path: Path) -> None:
    """Each ``[matrix]`` and ``[[client]]`` key of the model, set in a config, is read."""
    from stella_conform.conformance.matrix import load_config

    (tmp_path / "known.toml").write_text('[known-failures]\n"R3.unknown-type-inert" = "why"\n')
    (tmp_path / "m.toml").write_text(
        "[matrix]\nexamples = 3\nseed = 4\njobs = 1\nmax_shrinks = 5\nfixtures_per_check = 2\n"
        'failures_dir = "f"\n\n[[client]]\nname = "c"\ncommand = ["true"]\nmode = "exit"\n'
        'profiles = ["reader"]\nknown_failures = "known.toml"\ntimeout = 3.0\n'
        'line_timeout = 2.0\nknows = ["text"]\nreads = ["run"]\ncomputes = ["input_tokens"]\n'
        "summary_only = false\n"
    )
    config = load_config(tmp_path / "m.toml")
    client = config.clients[0]
    read = {
        "examples": config.examples == 3,
        "seed": config.seed == 4,
        "jobs": config.jobs == 1,
        "max_shrinks": config.max_shrinks == 5,
        "fixtures_per_check": config.fixtures_per_check == 2,
        "failures_dir": config.failures_dir == tmp_path / "f",
        "client": client.command == ("true",),
        "mode": client.mode == "exit",
        "profiles": client.profiles == ("reader",),
        "known_failures": client.known_failures == tmp_path / "known.toml",
        "timeout": client.timeout == 3.0,
        "line_timeout": client.line_timeout == 2.0,
        "knows": client.claims.get("knows") == ["text"],
        "reads": client.claims.get("reads") == ["run"],
        "computes": client.claims.get("computes") == ["input_tokens"],
        "summary_only": client.claims.get("summary_only") is False,
        "wire_schema": True,  # [[vocabulary]]: tests/conformance/matrix/test_matrix.py
        "seed_corpus": True,  # [[vocabulary]]: tests/conformance/matrix/test_version_columns.py
    }
    for option in OPTIONS:
        if isinstance(option.matrix, InMatrix):
            assert read.get(option.name), f"{option.name}: not read from a matrix config"


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("cli", "Invalid value for '--examples': at most 1000000000, got 1e20"),
        ("matrix", "[matrix] examples: at most 1000000000, got 1e+20"),
        ("pyproject", "[tool.stella-conform] examples: at most 1000000000, got 1e+20"),
    ],
)
def test_a_number_out_of_range_is_refused_alike_by_every_source(
    tmp_path: Path, source: str, said: str
) -> None:
    args = ["run", "--", sys.executable, "-c", "pass"]
    if source == "cli":
        args = ["run", "--examples", "1e20", "--", sys.executable, "-c", "pass"]
    elif source == "matrix":
        (tmp_path / "m.toml").write_text(
            '[matrix]\nexamples = 1e20\n\n[[client]]\nname = "c"\ncommand = ["true"]\n'
        )
        args = ["matrix", "m.toml", "--out", "out"]
    else:
        (tmp_path / "pyproject.toml").write_text("[tool.stella-conform]\nexamples = 1e20\n")
    out = kit_inline(*args, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert said in out.stderr, out.stderr


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("1.5", "examples: a whole number, got 1.5"),
        ("true", "examples: a whole number, got True"),
        ('"5"', "examples: a whole number, got '5'"),
    ],
)
def test_the_matrix_refuses_a_count_that_is_not_a_whole_number_as_pyproject_does(
    tmp_path: Path, value: str, said: str
) -> None:
    """A ``[matrix]`` count is checked by the model, not truncated or read from a text: the
    words are the model's, which ``[tool.stella-conform]`` gives too (a TOML file types its
    values, so a text is no number there either)."""
    from stella_conform.conformance.matrix import load_config
    from stella_conform.errors import SetupError
    from stella_conform.options.kinds import Problem, from_toml
    from stella_conform.options.model import BY_NAME
    from stella_conform.options.pyproject import values

    path = tmp_path / "m.toml"
    path.write_text(f'[matrix]\nexamples = {value}\n\n[[client]]\nname = "c"\ncommand = ["true"]\n')
    with pytest.raises(SetupError) as refused:
        load_config(path)
    assert str(refused.value) == f"{path}: [matrix] {said}"
    given = {"1.5": 1.5, "true": True}.get(value, "5")
    with pytest.raises(Problem) as model:
        from_toml(BY_NAME["examples"].kind, given)
    assert f"examples: {model.value}" == said
    with pytest.raises(SetupError) as table:
        values({"examples": given}, tmp_path / "pyproject.toml")
    assert str(table.value).endswith(f"[tool.stella-conform] {said}")


def test_the_plugin_refuses_a_number_out_of_range_in_the_same_words(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        f"[pytest]\nstella_client = {sys.executable} -c pass\n"
        "stella_examples = 99999999999999999999\n"
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = "stella_examples (--stella-examples): at most 1000000000, got 99999999999999999999"
    assert said in result.stderr.str(), result.stderr.str()


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"examples": 10**20}, "examples=...): at most 1000000000, got 100000000000000000000"),
        ({"examples": -1}, "examples=...): at least 0, got -1"),
        ({"examples": 1.5}, "examples=...): a whole number, got 1.5"),
        ({"seed": True}, "seed=...): a whole number, got True"),
    ],
)
def test_conformance_tests_refuses_its_arguments_in_the_models_words(
    given: dict[str, object], said: str
) -> None:
    """``conformance_tests(examples=...)`` is checked by the model, as ``stella_examples``."""
    from stella_conform.pytest_plugin import conformance_tests

    with pytest.raises(ValueError) as refused:
        conformance_tests(lambda lines: None, **given)  # type: ignore[arg-type]
    assert str(refused.value) == f"conformance_tests({said}"


def test_pyproject_is_read_from_the_nearest_folder_up(tmp_path: Path) -> None:
    """A key of [tool.stella-conform] is the default of its option, paths from the table's
    folder; the command line wins over it."""
    from stella_conform.cli.options import pyproject_defaults
    from stella_conform.cli.run import run

    (tmp_path / "pyproject.toml").write_text(
        '[tool.stella-conform]\nexamples = 3\nmode = "exit"\nprofile = ["reader"]\n'
        'knows = ["text", "error"]\nfailures-dir = "out/failures"\ncrash-detection = false\n'
    )
    below = tmp_path / "a" / "b"
    below.mkdir(parents=True)
    here = Path.cwd()
    try:
        import os

        os.chdir(below)
        defaults = pyproject_defaults(run)
        context = run.make_context("run", ["--examples", "7", "--", "true"])
    finally:
        os.chdir(here)
    assert defaults == {
        "examples": 3,
        "mode": "exit",
        "profiles": ["reader"],
        "knows": "text,error",
        "failures_dir": str(tmp_path / "out/failures"),
        "crash_detection": False,
    }
    assert context.params["examples"] == 7  # the command line wins
    assert context.params["mode"] == "exit" and context.params["profiles"] == ("reader",)


def test_a_bad_pyproject_key_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.stella-conform]\nmax_shrinks = 3\n")
    out = kit_inline("run", "--", sys.executable, "-c", "pass", cwd=tmp_path)
    assert out.returncode == 2
    assert "unknown key 'max_shrinks' (did you mean 'max-shrinks'?)" in out.stderr


def test_a_broken_pyproject_of_another_tool_is_not_the_kit_s_business(tmp_path: Path) -> None:
    """A project's pyproject.toml that does not name the kit's table is read by its own
    tools; a run from below it grades as if there were none. One that names the table and
    cannot be read is the user's mistake in configuring the kit: exit 2, naming it."""
    from stella_conform.options.pyproject import read

    below = tmp_path / "sub"
    below.mkdir()
    (tmp_path / "pyproject.toml").write_text("[tool.other\nbroken = \n")
    assert read(below) == (None, {})
    (tmp_path / "pyproject.toml").write_text("[tool.stella-conform]\nexamples = \n")
    out = kit_inline("run", "--", sys.executable, "-c", "pass", cwd=below)
    assert out.returncode == 2 and "malformed pyproject.toml" in out.stderr, out.stderr


def test_each_pyproject_key_of_the_model_is_read(tmp_path: Path) -> None:
    from stella_conform.options.pyproject import values

    samples = {
        "Count": 2,
        "Seconds": 2.0,
        "Flag": True,
        "Text": "x",
        "Words": ["x"],
    }
    for option in OPTIONS:
        if isinstance(option.pyproject, str):
            sample = samples.get(type(option.kind).__name__)
            if option.name in ("mode", "color"):
                sample = option.default
            read = values({option.pyproject: sample}, tmp_path / "pyproject.toml")
            assert option.name in read, option.name


def test_suite_config_is_made_from_the_options_by_their_names() -> None:
    from stella_conform.conformance.clients.runner import Client
    from stella_conform.options.suite import suite_config

    config = suite_config(
        Client(argv=("true",), mode="exit"),
        {"examples": 3, "seed": 9, "max_shrinks": 4, "wire_schema": Path("s.json"), "x": 1},
        started=100.0,
    )
    assert (config.examples, config.seed, config.shrink_budget) == (3, 9, 4)
    assert config.wire_schema == "s.json" and config.deadline is None
    budget = suite_config(Client(argv=("true",), mode="exit"), {"time_budget": 5.0}, started=1.0)
    assert budget.deadline == 6.0 and budget.time_budget == 5.0


_HELP = "click's own --help, on every command"
_PRINTS = "how this command prints what it looked up, not a choice of a grading run"
#: The command-line options that are not the model's: the one command's own, each with why
#: it is not an option of the kit (by the command's path, and the option's first flag).
COMMAND_OWN: dict[tuple[str, str], str] = {
    ("", "--version"): "prints the kit's version: a question, not a choice of a run",
    ("decode", "--json"): _PRINTS,
    ("decode", "--quiet"): _PRINTS,
    ("checks", "--json"): _PRINTS,
    ("trace check", "--json"): _PRINTS,
    ("vocabulary", "--json"): _PRINTS,
    ("report diff", "--json"): _PRINTS,
    ("report merge", "--markdown"): "the merged matrix shards' Markdown, not a grading report",
    ("report merge", "--html"): "the merged matrix shards' HTML, not a grading report",
    ("corpus export", "--count"): "how many streams the exported corpus holds",
    ("corpus export", "--seed"): "seeds the exported corpus (also -s), which no run grades",
    ("corpus export", "--max-mutations"): "how far an exported stream is mutated",
    ("corpus export", "--force"): "replaces a corpus already in the folder",
    ("corpus expect", "--rule"): "the rules an expectation file names, which no run grades",
    ("corpus expect", "--description"): "the words an expectation file holds",
    ("corpus expect", "--force"): "replaces an expectation file already beside the stream",
    ("corpus diff", "--oracle"): "the external decoder compared with the kit's",
    ("corpus diff", "--generated"): "generated streams compared beside the fixtures",
    ("corpus diff", "--seed"): "seeds the streams compared (also -s), which no run grades",
    ("corpus diff", "--timeout"): "seconds the external decoder may take, not a client",
    ("corpus diff", "--json"): "the comparison's JSON, not a grading report",
    ("replay", "--check"): "the one check a replayed case is judged by",
    ("replay", "--parser"): "replays against an in-process parser instead of a command",
    ("replay", "--reject"): "the in-process parser's rejecting exception (with --parser)",
    ("replay", "--cwd"): "the folder a replayed client starts in, as the matrix cell's did",
    ("matrix", "--out"): "the folder of the matrix's documents, named per run",
    ("init", "--force"): "overwrites files init would otherwise leave",
}


def _every_command() -> dict[str, click.Command]:
    """Every command of the kit by its path (``""`` the group, ``"report merge"``)."""
    from stella_conform.cli import main

    found: dict[str, click.Command] = {}

    def walk(command: click.Command, path: str) -> None:
        found[path] = command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}".strip())

    walk(main, "")
    return found


def _options_outside_the_model() -> list[str]:
    """Each command's click option that is neither made from the model nor listed in
    :data:`COMMAND_OWN`, and each model option on a command the model does not name."""
    from stella_conform.cli.options import ModelOption

    wrong = []
    for path, command in _every_command().items():
        for param in command.get_params(click.Context(command)):
            if not isinstance(param, click.Option):
                continue  # an argument: the command's own input
            flag = next((f for f in param.opts if f.startswith("--")), param.opts[0])
            if isinstance(param, ModelOption):
                cli = BY_NAME[param.model].cli
                assert isinstance(cli, Cli)
                if path.split(" ")[0] not in cli.commands:
                    wrong.append(f"{path} {flag}: the model names {cli.commands} for it")
            elif flag == "--help":
                continue  # _HELP
            elif not COMMAND_OWN.get((path, flag), "").strip():
                wrong.append(f"{path or 'stella-conform'} {flag}: not the model's")
    return wrong


def test_every_command_line_option_is_the_models_or_the_commands_own_for_a_reason() -> None:
    """The reverse of the test above: a hand-written option outside the model fails here
    unless it is listed with why it is the one command's own."""
    assert _options_outside_the_model() == []
    commands = _every_command()
    for path, flag in COMMAND_OWN:
        flags = {f for p in commands[path].params for f in p.opts}
        assert flag in flags, f"{path} {flag}: listed, but no longer an option of the command"
