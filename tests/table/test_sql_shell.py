"""``flintlock sql``: a script run in-process (jobs on TaskManager threads) and an interactive
session driven through a pseudo-terminal in a real subprocess."""

import io
import os
import pty
import select
import subprocess
import sys
import time

from flintlock.cli.main import main
from flintlock.cli.sql_shell import split_statements
from flintlock.testing.executor import use_thread_executor

SCRIPT = """
-- comments and ';' inside strings do not end a statement
CREATE TABLE src (id BIGINT, tag STRING) WITH (
  'connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
  'fields.id.end' = '4', 'fields.tag.length' = '2');
SET 'parallelism.default' = '1';
SHOW TABLES;
SELECT id, CONCAT('a;', CAST(id AS STRING)) AS s FROM src WHERE id > 2;
"""


def test_split_statements_keeps_strings_comments_and_statement_sets():
    text = ("SELECT 'a;b' FROM t; -- x;\n/* y; */ BEGIN STATEMENT SET; INSERT INTO a SELECT 1;"
            " END; EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 2; END;")
    assert list(split_statements(text)) == [
        "SELECT 'a;b' FROM t",
        "BEGIN STATEMENT SET; INSERT INTO a SELECT 1; END",
        "EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 2; END",
    ]


def test_a_script_runs_statement_by_statement(tmp_path, monkeypatch, capsys):
    use_thread_executor(monkeypatch)
    script = tmp_path / "job.sql"
    script.write_text(SCRIPT)
    assert main(["sql", "-f", str(script)]) == 0
    out = capsys.readouterr().out
    assert "[INFO] Execute statement succeeded." in out
    assert "[INFO] Session property has been set." in out
    assert "| table name |\n+------------+\n|        src |" in out
    assert ("| +I |                    3 |                            a;3 |\n"
            "| +I |                    4 |                            a;4 |\n") in out
    assert "2 rows in set" in out


def test_a_script_stops_at_its_first_error_without_a_traceback(tmp_path, monkeypatch, capsys):
    use_thread_executor(monkeypatch)
    script = tmp_path / "bad.sql"
    script.write_text("CREATE TABLE t (a INT) WITH ('connector' = 'datagen');\n"
                      "SELECT aa FROM t;\nSHOW TABLES;\n")
    assert main(["sql", "-f", str(script)]) == 1
    out = capsys.readouterr().out
    assert ("[ERROR] Could not execute SQL statement. Reason:\n"
            "flintlock.table.errors.ValidationError: Column 'aa' not found in any table; did "
            "you mean 'a'?") in out
    assert "Traceback" not in out
    assert "SHOW TABLES" not in out


def _read_until(fd, marker, timeout_s=120.0):
    seen = b""
    deadline = time.monotonic() + timeout_s
    while marker not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {marker!r} in {seen.decode(errors='replace')!r}"
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


def test_an_interactive_session_in_a_terminal(tmp_path):
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "flintlock.cli.main", "sql"], stdin=follower, stdout=follower,
        stderr=follower, cwd=tmp_path, close_fds=True)
    os.close(follower)
    try:
        _read_until(leader, b"Flink SQL> ")
        os.write(leader, b"CREATE TABLE t (\n")
        _read_until(leader, b"> ")
        os.write(leader, b"  a INT, b STRING) WITH ('connector' = 'datagen');\n")
        assert "[INFO] Execute statement succeeded." in _read_until(leader, b"Flink SQL> ")
        os.write(leader, b"DESCRIBE t;\n")
        described = _read_until(leader, b"Flink SQL> ")
        assert "|    a |    INT | TRUE |" in described
        os.write(leader, b"SELECT c FROM t;\n")
        failed = _read_until(leader, b"Flink SQL> ")
        assert "[ERROR] Could not execute SQL statement." in failed
        assert "Column 'c' not found in any table" in failed
        os.write(leader, b"HELP;\n")
        assert "QUIT/EXIT" in _read_until(leader, b"Flink SQL> ")
        os.write(leader, b"QUIT;\n")
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)


def test_help_lists_the_sql_command():
    out = io.StringIO()
    from contextlib import redirect_stdout

    with redirect_stdout(out):
        try:
            main(["--help"])
        except SystemExit:
            pass
    assert "sql" in out.getvalue()
