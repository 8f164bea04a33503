"""What every command shares, re-exported from the modules that hold it: ``params`` (click
types, checked paths), ``group`` (exit statuses), ``input_files``, ``client``, ``grading`` and
``databases``. The commands import from those modules themselves."""

from stella_conform.cli.client import (
    AUTO_MODE_CHOICE,
    AUTO_MODE_HELP,
    MODE_CHOICE,
    auto_mode_default,
    client_options,
    load_vocabulary,
    make_client,
    parse_exit_codes,
    wire_schema_option,
)
from stella_conform.cli.databases import (
    DEFAULT_DATABASE,
    SKIPPED_SHOWN,
    artifact_option,
    build_database,
    database_option,
    load_seed_corpus,
    seed_corpus_option,
)
from stella_conform.cli.grading import (
    JOBS_PER_CPU,
    cap_jobs,
    claim_options,
    color_option,
    parse_shard,
    report_options,
    shard_checks,
    told_on_the_command_line,
    use_color,
    write_not_graded,
)
from stella_conform.cli.group import (
    KitGroup,
    _printable_streams,
    _unwritable_stream,
    fail_setup,
)
from stella_conform.cli.input_files import (
    open_input,
    stream_lines,
)
from stella_conform.cli.params import (
    MODULE_SPEC,
    KitPath,
    PathIn,
    Seconds,
    _knows_file,
    _module_file,
    _unless_url,
    option_name,
    refuse_named_path,
)
from stella_conform.errors import INTERNAL_ERROR

__all__ = [
    "AUTO_MODE_CHOICE",
    "AUTO_MODE_HELP",
    "DEFAULT_DATABASE",
    "INTERNAL_ERROR",
    "JOBS_PER_CPU",
    "MODE_CHOICE",
    "MODULE_SPEC",
    "SKIPPED_SHOWN",
    "KitGroup",
    "KitPath",
    "PathIn",
    "Seconds",
    "_knows_file",
    "_module_file",
    "_printable_streams",
    "_unless_url",
    "_unwritable_stream",
    "artifact_option",
    "auto_mode_default",
    "build_database",
    "cap_jobs",
    "claim_options",
    "client_options",
    "color_option",
    "database_option",
    "fail_setup",
    "load_seed_corpus",
    "load_vocabulary",
    "make_client",
    "open_input",
    "option_name",
    "parse_exit_codes",
    "parse_shard",
    "refuse_named_path",
    "report_options",
    "seed_corpus_option",
    "shard_checks",
    "stream_lines",
    "told_on_the_command_line",
    "use_color",
    "wire_schema_option",
    "write_not_graded",
]
