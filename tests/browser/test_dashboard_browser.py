"""The web dashboard in a real browser: headless Chromium (Debian's chromium-headless-shell,
unpacked without root by ``tests/browser/chromium.py``) driven by Playwright, TaskManagers as
threads. The tests click, as a user would (issue 30):

- a running job (unaligned checkpoints every 100 ms, a slow operator): the token form, the
  job graph with backpressure colours, the charts drawn at page load from the history the
  server keeps, a click on a vertex opens its subtask table, a click on a checkpoint its
  subtasks, a TaskManager's log and stdout, the configuration; a screenshot for docs;
- a restarting job: its vertices read RESTARTING / FAILED, not RUNNING, and the exception
  history shows the traceback with the job's own file;
- the job-control buttons: Savepoint completes and names the savepoint's path; Cancel
  cancels the job; the same actions without the token are refused (401) and change nothing;
- the history server's page of a finished job, from its archive: FINISHED, no buttons, the
  subtask table and the charts.

If the browser cannot be installed here the tests are skipped with the reason; if Playwright
is missing, too (it is in the ``test`` extra). Under ``make test`` and ``.ci/run``
(``FLINTLOCK_REQUIRE_BROWSER=1``) either is a failure instead, so a run that did not test the
dashboard cannot pass. Waits are Playwright's bounded waits for a DOM state, never timed
assertions.
"""

import contextlib
import threading
from pathlib import Path

import pytest

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.runtime.rest.history_server import HistoryServer
from flintlock.testing.environments import local_configuration
from flintlock.testing.executor import use_thread_executor
from flintlock.testing.gates import FileGate, gated_numbers
from flintlock.testing.waiting import wait_for
from tests.browser import chromium
from tests.integration import test_dashboard_views_threads as views_test

ARTIFACTS = Path(__file__).parent / "artifacts"
STOP = threading.Event()
WAIT_S = 60


def _slow(value):
    STOP.wait(0.0005)
    return value


def _unavailable(reason):
    """Skips, or fails where the browser is required (``chromium.required()``)."""
    if chromium.required():
        pytest.fail(f"{reason} ({chromium.REQUIRE}=1: the dashboard test may not be skipped; "
                    f"set {chromium.REQUIRE}=0 to allow it)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    try:
        executable = chromium.ensure()
    except chromium.BrowserUnavailable as error:
        _unavailable(f"headless Chromium cannot be installed here: {error}")
    try:
        from playwright import sync_api
    except ImportError:
        _unavailable("Playwright (the test extra) is not installed")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(executable.executable),
                                              args=["--no-sandbox"], env=executable.env)
        try:
            yield launched
        finally:
            launched.close()


class Page:
    """A page that collects the browser's errors (none may occur)."""

    def __init__(self, browser):
        self.page = browser.new_page(viewport={"width": 1400, "height": 1300})
        self.errors = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type == "error" else None)
        self.page.on("response", lambda r: self.errors.append(f"{r.status} {r.url}")
                     if r.status >= 400 else None)

    def __enter__(self):
        return self.page

    def __exit__(self, *exc_info):
        self.page.close()


def _environment(monkeypatch, tmp_path, **options):
    use_thread_executor(monkeypatch)
    config = local_configuration(tmp_path, options={
        "rest.port": "0", "heartbeat.interval": "200 ms", **options})
    return StreamExecutionEnvironment.get_execution_environment(config)


@pytest.fixture
def job(monkeypatch, tmp_path):
    STOP.clear()
    env = _environment(monkeypatch, tmp_path)
    env.set_parallelism(1)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().enable_unaligned_checkpoints()  # barriers overtake the backlog
    env.from_collection(list(range(1_000_000))).map(lambda x: x).name("Fast") \
        .rebalance().map(_slow).name("Slow").filter(lambda x: False).print()
    client = env.execute_async("dashboard demo")
    assert client.jm.wait_until_running(WAIT_S)
    yield client
    STOP.set()
    client.jm.cancel()
    assert client.join(WAIT_S)


@contextlib.contextmanager
def _gated_job(monkeypatch, tmp_path, name, build, **options):
    """A job ``build(env, gate)`` makes, held mid-stream by ``gate``; ended when done."""
    env = _environment(monkeypatch, tmp_path, **options)
    env.set_parallelism(1)
    gate = FileGate(tmp_path / "gate")
    build(env, gate)
    client = env.execute_async(name)
    try:
        yield client
    finally:
        gate.open()
        client.jm.cancel()
        assert client.join(WAIT_S)


def _open(page, url, token):
    page.goto(f"{url}/#token={token}")
    page.locator("#app:not([hidden])").wait_for()


def test_the_dashboard_of_a_running_job(browser, job):
    endpoint = job.rest_endpoint
    job_id = job.get_job_id()
    holder = Page(browser)
    with holder as page:
        page.goto(f"{endpoint.url}/")  # without the token: the page asks for it
        page.wait_for_selector("#login:not([hidden])")
        page.fill("#token", "wrong")
        page.click("#login button")
        page.locator("#status[data-state=error]", has_text="refused").wait_for()
        holder.errors.clear()  # the browser logs the 401 it just got; nothing else may fail

        _open(page, endpoint.url, endpoint.token)
        page.wait_for_selector(f"#jobs tr[data-job-id='{job_id}'][data-state=RUNNING]")
        assert "token" not in page.url  # the fragment was taken out of the address
        page.wait_for_selector("#actions:not([hidden])")  # a live endpoint: job control
        assert not page.is_visible("#mode")  # not the history server

        vertices = page.locator("#graph g.vertex")
        vertices.first.wait_for()
        assert vertices.count() == 2
        assert page.locator("#graph path.edge").count() == 1
        assert "REBALANCE" in page.text_content("#graph")
        page.wait_for_selector("#graph g.vertex[data-backpressure=high]")
        fast = page.locator("#graph g.vertex[data-backpressure=high]").text_content()
        assert "Fast" in fast and "backlog " in fast
        page.locator("#graph g.vertex[data-backpressure=ok]", has_text="Slow").wait_for()
        # the charts come from the server's history: drawn on the first render after load
        page.wait_for_selector("#chart-throughput polyline")
        page.wait_for_selector("#chart-backpressure polyline")

        page.locator("#graph g.vertex", has_text="Slow").click()
        row = page.locator("#subtasks tr[data-subtask='0'][data-status=RUNNING]")
        row.wait_for()
        page.wait_for_function("""() => {
            const row = document.querySelector("#subtasks tr[data-subtask='0']");
            return row && Number(row.cells[3].textContent) > 0
                && row.cells[5].textContent.endsWith("%");
        }""")
        assert "Slow" in page.text_content("#vertex-title")

        page.wait_for_selector("#checkpoints tr[data-status=COMPLETED]")
        completed = page.locator("#checkpoints tr[data-status=COMPLETED]").first
        cells = completed.locator("td").all_text_contents()
        assert cells[1] == "COMPLETED" and cells[2] == "CHECKPOINT" and cells[9] == "2/2"
        completed.click()
        page.wait_for_selector("#checkpoint-subtasks tr[data-subtask]")
        statuses = page.locator("#checkpoint-subtasks tr td:nth-child(3)").all_text_contents()
        assert statuses and set(statuses) <= {"completed", "pending_or_failed"}

        page.wait_for_function("""() => {
            const row = document.querySelector("#taskmanagers tr[data-tm-id]");
            return row !== null && row.cells[4].textContent.endsWith("iB");
        }""")
        page.locator("#taskmanagers button[data-stream=log]").first.click()
        page.wait_for_selector("#tm-output[data-stream=log]")
        page.locator("#taskmanagers button[data-stream=stdout]").first.click()
        page.wait_for_selector("#tm-output[data-stream=stdout]")

        page.wait_for_selector("#configuration tr[data-key='execution.checkpointing.interval']")
        page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)
        assert not holder.errors, holder.errors


def test_a_restarting_job_reads_restarting(browser, monkeypatch, tmp_path):
    def build(env, gate):
        gated_numbers(env, gate, 100, before_gate=5).map(views_test.FailsFirst()) \
            .name("Failing").print()

    with _gated_job(monkeypatch, tmp_path, "restarting", build, **{
            "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "3",
            "restart-strategy.fixed-delay.delay": "10 min"}) as client:
        endpoint = client.rest_endpoint
        holder = Page(browser)
        with holder as page:
            _open(page, endpoint.url, endpoint.token)
            page.wait_for_selector("#job[data-state=RESTARTING]")
            page.wait_for_selector("#graph g.vertex")
            states = {page.locator("#graph g.vertex").nth(i).get_attribute("data-status")
                      for i in range(page.locator("#graph g.vertex").count())}
            assert "RUNNING" not in states and states <= {"RESTARTING", "FAILED"}, states
            page.locator("#exceptions summary", has_text="ZeroDivisionError").first.click()
            trace = page.locator("#exceptions pre.trace").first.text_content()
            assert "divides by zero" in trace and views_test.__file__ in trace
            page.screenshot(path=str(ARTIFACTS / "restarting.png"), full_page=True)
            assert not holder.errors, holder.errors


def _idle(env, gate):
    env.enable_checkpointing(200)
    gated_numbers(env, gate, 1000, before_gate=10).map(lambda x: x).name("Idle").print()


def test_the_buttons_take_a_savepoint_and_cancel_the_job(browser, monkeypatch, tmp_path):
    with _gated_job(monkeypatch, tmp_path, "controlled", _idle) as client:
        assert client.jm.wait_until_running(WAIT_S)
        endpoint = client.rest_endpoint
        holder = Page(browser)
        with holder as page:
            _open(page, endpoint.url, endpoint.token)
            page.wait_for_selector("#actions:not([hidden])")
            # without the token every action is refused and nothing happens
            refused = page.evaluate("""async (jobId) => {
                const cancel = await fetch(`/jobs/${jobId}?mode=cancel`, { method: "PATCH" });
                const savepoint = await fetch(`/jobs/${jobId}/savepoints`, { method: "POST",
                    headers: { Authorization: "Bearer wrong" }, body: "{}" });
                return [cancel.status, savepoint.status];
            }""", client.get_job_id())
            assert refused == [401, 401]
            holder.errors.clear()  # the two 401s are logged by the browser
            assert client.jm.get_status().name == "RUNNING"

            target = tmp_path / "savepoints"
            page.fill("#savepoint-dir", str(target))
            page.click("#trigger-savepoint")
            page.locator("#action-result[data-state=done]", has_text="completed").wait_for(
                timeout=WAIT_S * 1000)
            location = page.text_content("#action-result").split("completed: ", 1)[1]
            assert Path(location).parent == target and Path(location).is_dir()

            assert not holder.errors, holder.errors
            page.click("#cancel-job")
            assert client.join(WAIT_S)
            assert client.jm.get_status().name == "CANCELED"
            page.locator("#status[data-state=error]", has_text="endpoint closes").wait_for()


def test_the_stop_button_ends_the_job_with_a_savepoint(browser, monkeypatch, tmp_path):
    with _gated_job(monkeypatch, tmp_path, "stopped", _idle) as client:
        assert client.jm.wait_until_running(WAIT_S)
        endpoint = client.rest_endpoint
        with Page(browser) as page:
            _open(page, endpoint.url, endpoint.token)
            page.fill("#savepoint-dir", str(tmp_path / "final"))
            page.check("#stop-drain")
            page.click("#stop-job")
            page.locator("#action-result[data-state=done]", has_text="completed").wait_for(
                timeout=WAIT_S * 1000)
            location = page.text_content("#action-result").split("completed: ", 1)[1]
            assert Path(location).parent == tmp_path / "final"
            assert client.join(WAIT_S)
            assert client.jm.get_status().name == "FINISHED"


def test_the_history_server_shows_a_finished_job(browser, monkeypatch, tmp_path):
    archive = tmp_path / "archive"
    env = _environment(monkeypatch, tmp_path, **{"jobmanager.archive.fs.dir": str(archive)})
    env.set_parallelism(2)
    env.enable_checkpointing(50)
    gate = FileGate(tmp_path / "gate")
    gated_numbers(env, gate, 5000, before_gate=1000).map(lambda x: x + 1).name("Plus") \
        .key_by(lambda x: x % 3).reduce(lambda a, b: a + b).name("Total") \
        .filter(lambda x: False).print()
    client = env.execute_async("archived")
    try:  # a few points of history before the job runs to its end
        def points(history):
            columns = [v["records-out-per-second"] for v in history["vertices"].values()]
            return len(columns) == 2 and all(
                sum(x is not None for x in column) >= 2 for column in columns)

        wait_for(client.rest_endpoint.api.history.series, points, WAIT_S,
                 "two points of history for every vertex")
    finally:
        gate.open()
    client.wait(WAIT_S)
    assert client.join(WAIT_S)
    server = HistoryServer(archive, port=0)
    try:
        holder = Page(browser)
        with holder as page:
            _open(page, server.url, server.token)
            job_id = client.get_job_id()
            page.wait_for_selector(f"#jobs tr[data-job-id='{job_id}'][data-state=FINISHED]")
            assert page.is_visible("#mode")
            page.wait_for_selector("#job[data-state=FINISHED]")
            assert not page.is_visible("#actions")  # read-only: no job control
            page.wait_for_selector("#graph g.vertex[data-status=FINISHED]")
            page.locator("#graph g.vertex", has_text="Total").click()
            page.wait_for_selector("#subtasks tr[data-subtask='1'][data-status=FINISHED]")
            read = page.locator("#subtasks tr td:nth-child(4)").all_text_contents()
            assert sum(int(n) for n in read) == 5000
            page.wait_for_selector("#chart-throughput polyline", state="attached")
            page.screenshot(path=str(ARTIFACTS / "history.png"), full_page=True)
            assert not holder.errors, holder.errors
    finally:
        server.close()
