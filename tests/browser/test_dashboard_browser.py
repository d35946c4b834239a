"""The web dashboard in a real browser: headless Chromium (Debian's chromium-headless-shell,
unpacked without root by ``tests/browser/chromium.py``) driven by Playwright loads the
dashboard of a running job (TaskManagers as threads, unaligned checkpoints every 100 ms, a
slow operator), and the test checks the rendered job list, job graph (vertices, edge, backpressure
colouring), throughput chart and checkpoint table through the DOM, then saves a screenshot
to ``tests/browser/artifacts/dashboard.png``.

If the browser cannot be installed here the test is skipped with the reason; if Playwright
is missing, too (it is in the ``test`` extra). Under ``make test`` and ``.ci/run``
(``FLINTLOCK_REQUIRE_BROWSER=1``) either is a failure instead, so a run that did not test the
dashboard cannot pass. Waits are Playwright's bounded waits for a DOM state, never timed
assertions.
"""

import threading
from pathlib import Path

import pytest

from flintlock.datastream import StreamExecutionEnvironment
from flintlock.testing.environments import local_configuration
from flintlock.testing.executor import use_thread_executor
from tests.browser import chromium

ARTIFACTS = Path(__file__).parent / "artifacts"
STOP = threading.Event()


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
def browser_executable():
    try:
        return chromium.ensure()
    except chromium.BrowserUnavailable as error:
        _unavailable(f"headless Chromium cannot be installed here: {error}")


@pytest.fixture
def job(monkeypatch, tmp_path):
    use_thread_executor(monkeypatch)
    STOP.clear()
    config = local_configuration(tmp_path, options={
        "rest.port": "0", "heartbeat.interval": "200 ms"})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    env.enable_checkpointing(100)
    env.get_checkpoint_config().enable_unaligned_checkpoints()  # barriers overtake the backlog
    env.from_collection(list(range(1_000_000))).map(lambda x: x).name("Fast") \
        .rebalance().map(_slow).name("Slow").filter(lambda x: False).print()
    client = env.execute_async("dashboard demo")
    assert client.jm.wait_until_running(60)
    yield client
    STOP.set()
    client.jm.cancel()
    assert client.join(60)


def test_dashboard_renders_a_running_job(browser_executable, job):
    try:
        from playwright import sync_api
    except ImportError:
        _unavailable("Playwright (the test extra) is not installed")
    endpoint = job.rest_endpoint
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(browser_executable.executable),
            args=["--no-sandbox"], env=browser_executable.env)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

            page.goto(f"{endpoint.url}/")  # without the token: the page asks for it
            page.wait_for_selector("#login:not([hidden])")
            page.fill("#token", "wrong")
            page.click("#login button")
            # the login form's own prompt is an error status too: wait for the refusal's
            page.locator("#status[data-state=error]", has_text="refused").wait_for()
            assert "refused" in page.text_content("#status")
            errors.clear()  # the browser logs the 401 it just got; nothing else may fail

            page.goto(f"{endpoint.url}/#token={endpoint.token}")
            job_id = job.get_job_id()
            page.wait_for_selector(f"#jobs tr[data-job-id='{job_id}'][data-state=RUNNING]")
            assert "token" not in page.url  # the fragment was taken out of the address

            vertices = page.locator("#graph g.vertex")
            vertices.first.wait_for()
            assert vertices.count() == 2
            names = " ".join(vertices.all_text_contents())
            assert "Fast" in names and "Slow" in names
            assert page.locator("#graph path.edge").count() == 1
            assert "REBALANCE" in page.text_content("#graph")
            page.wait_for_selector("#graph g.vertex[data-backpressure=high]")
            fast = page.locator("#graph g.vertex[data-backpressure=high]").text_content()
            assert "Fast" in fast
            assert "backlog " in fast  # the collection source's pendingRecords
            slow = page.locator("#graph g.vertex[data-backpressure=ok]", has_text="Slow")
            slow.wait_for()  # its first report may come a poll after the fast vertex's
            assert "busy" in slow.text_content()

            page.wait_for_selector("#checkpoints tr[data-status=COMPLETED]")
            row = page.locator("#checkpoints tr[data-status=COMPLETED]").first
            cells = row.locator("td").all_text_contents()
            assert cells[1] == "COMPLETED" and cells[2] == "CHECKPOINT"
            assert cells[9] == "2/2"

            # a registered TaskManager is listed at once; its figures come with its reports
            page.wait_for_function("""() => {
                const row = document.querySelector("#taskmanagers tr[data-tm-id]");
                return row !== null && row.cells[4].textContent.endsWith("iB")
                    && / of \\d+ /.test(row.cells[5].textContent);
            }""")
            tm_cells = page.locator("#taskmanagers tr[data-tm-id]").first.locator("td")
            assert tm_cells.nth(0).text_content().startswith("tm-")
            assert tm_cells.nth(4).text_content().endswith("iB")  # resident memory
            assert tm_cells.nth(5).text_content().endswith("iB)")  # network buffers in use

            page.wait_for_selector("#throughput polyline")
            page.wait_for_selector("#throughput-legend li")
            page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)
            assert not errors, errors
        finally:
            browser.close()
