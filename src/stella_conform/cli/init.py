"""First contact: ``init LANG`` writes an adapter skeleton to start from.

Each template is a complete adapter, in report and persistent mode, around a trivial reader
that passes ``smoke`` and the reader profile as written (``tests/cli/test_init.py`` grades
every one in both modes), so a client author starts from green and changes only the lines
marked ``EDIT``.  The one the parser goes in is handed the raw bytes of a stream (a reader
over them), never lines the template split: the author's own line splitting, decoding and
buffering are what is graded.  The templates
are plain files under ``adapters/templates/LANG/``, shipped in the wheel.  The folder's
name is the user's disk's: it is printed escaped, as any outside text is.
"""

from __future__ import annotations

import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

import click

from stella_conform.cli.params import KitPath
from stella_conform.errors import SetupError
from stella_conform.safe_files import DOCUMENT_CAP, file_kind, read_regular, write_atomic
from stella_conform.safe_text import terminal_safe


@dataclass(frozen=True)
class Template:
    files: tuple[str, ...]
    #: How to build it, run from the folder it was written to (empty: nothing to build).
    build: tuple[str, ...]
    #: The adapter's command, from that folder.
    command: tuple[str, ...]


TEMPLATES = {
    "python": Template(("stella_adapter.py",), (), ("python3", "stella_adapter.py")),
    "typescript": Template(
        ("stella_adapter.ts", "package.json", "tsconfig.json"),
        ("npm install", "npx tsc"),
        ("node", "dist/stella_adapter.js"),
    ),
    "go": Template(
        ("stella_adapter.go", "go.mod"),
        ("go build -o stella-adapter .",),
        ("./stella-adapter",),
    ),
    "rust": Template(
        ("stella_adapter.rs", "Cargo.toml"),
        ("cargo build --release",),
        ("./target/release/stella-adapter",),
    ),
}


def templates_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "adapters" / "templates"


def write_template(language: str, directory: Path, *, force: bool = False) -> list[Path]:
    """Copy a language's template into ``directory``; :class:`SetupError` rather than overwrite.

    A name the template writes that is a link (dangling or not), a FIFO, a folder or a
    device is refused, ``--force`` or not: writing through a dangling link creates a file
    outside the folder, through a link to a 0600 file overwrites it and makes it 0755, and
    opening a FIFO hangs ``init``.  Each file is written whole to a temporary file beside
    it and renamed into place.
    """
    template = TEMPLATES[language]
    source = templates_dir() / language
    targets = [directory / name for name in template.files]
    existing = []
    for target in targets:
        try:
            mode = target.lstat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SetupError(f"cannot write {target}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(mode):
            raise SetupError(f"{target} is a symbolic link: refusing to write through it")
        if not stat.S_ISREG(mode):
            raise SetupError(f"{target} is {file_kind(mode)}, not a regular file: refusing it")
        existing.append(target)
    if existing and not force:
        raise SetupError(f"{existing[0]} exists; pass --force to overwrite it")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, target in zip(template.files, targets, strict=True):
            data = read_regular(source / name, DOCUMENT_CAP)
            write_atomic(target, data, mode=0o755 if name.endswith(".py") else None)
    except OSError as exc:
        raise SetupError(f"cannot write to {directory}: {exc.strerror or exc}") from None
    return targets


def shell_word(text: str) -> str:
    """``text`` as one word a shell reads back: quoted as ``shlex`` quotes it or, when it
    holds a character a terminal acts on, as bash's ``$'…'`` with that character written
    as :func:`~stella_conform.safe_text.terminal_safe` shows it (``\\x1b``, ``\\u202e``:
    the escapes ``$'…'`` reads)."""
    if terminal_safe(text) == text:
        return shlex.quote(text)
    return "$'" + terminal_safe(text.replace("\\", "\\\\").replace("'", "\\'")) + "'"


@click.command()
@click.argument("language", type=click.Choice(sorted(TEMPLATES)))
@click.argument(
    "directory", type=KitPath("folder", file_okay=False), default=Path("."),
)  # fmt: skip
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def init(language: str, directory: Path, force: bool) -> None:
    """Write an adapter skeleton: stella-conform init LANG [DIRECTORY]

    The adapter (report and persistent mode) wraps a trivial reader that passes `smoke`
    and the reader profile as written; replace the reader with your parser at the lines
    marked EDIT, where it is handed the raw bytes of each stream.
    """
    template = TEMPLATES[language]
    written = write_template(language, directory, force=force)
    click.echo(f"wrote {', '.join(terminal_safe(str(p)) for p in written)}")
    where = [] if directory == Path(".") else [f"cd {shell_word(str(directory))}"]
    command = shlex.join(template.command)
    click.echo("next:")
    for step in [*where, *template.build]:
        click.echo(f"  {step}")
    click.echo(f"  stella-conform smoke --mode report -- {command}")
    click.echo(f"  stella-conform run -- {command}")
    click.echo("then replace the trivial reader with your parser at the lines marked EDIT,")
    click.echo("and grade your program itself too: stella-conform run --mode exit -- YOUR-CLI")
