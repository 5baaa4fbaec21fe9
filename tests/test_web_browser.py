"""The web app in a real Chromium (Debian's, driven by Playwright): every page loads and answers, the numbers on
the page equal the API's JSON and the CLI's for the same scenario, a bad value shows its error next to the field,
the shared URL reproduces the answer, a long answer can be cancelled. Screenshots go to test-artefacts/ (not
committed). Skipped when no Chromium is installed (.ci/run installs it)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi")
playwright_api = pytest.importorskip("playwright.sync_api")

from aiinfra.cli import main  # noqa: E402

from .conftest import EXAMPLES, ROOT  # noqa: E402

CHROMIUM = os.environ.get("AIINFRA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no system Chromium (apt install chromium)")
ARTEFACTS = ROOT / "test-artefacts"
PAGES = {
    "train": "train-llama3.1-70b-h100.yaml",
    "memory": "memory-llama2-7b-adam-fp16.yaml",
    "infer": "infer-llama3.1-70b-h100.yaml",
    "capacity": "capacity-llama70b-10k-users.yaml",
    "simulate": "simulate-llama70b-h100.yaml",
    "cost": "cost-train-70b-32xh100.yaml",
    "tco": "tco-dgx-h100-vs-cloud.yaml",
    "datacenter": "datacenter-dgx-h100-pod.yaml",
    "schedule": "schedule-synthetic.yaml",
    "pack": "pack-portfolio.yaml",
}
NUMBER = re.compile(r"-?[\d,]*\.?\d+(?:e[+-]?\d+)?")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    import uvicorn

    from aiinfra.web.server import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    expected_4xx = "Failed to load resource: the server responded with a status of 4"  # a 422 the page shows
    pg.on(
        "console",
        lambda m: errors.append(m.text) if m.type == "error" and not m.text.startswith(expected_4xx) else None,
    )
    yield pg
    pg.close()
    assert not errors, errors  # no script error, no CSP violation


def _charts(pg: Any) -> list[dict[str, Any]]:
    """Every plotly chart on the page: its layout's title and axis titles, the title drawn, trace names, the y of
    its line shapes."""
    result: list[dict[str, Any]] = pg.eval_on_selector_all(
        ".js-plotly-plot",
        """els => els.map(el => ({
        id: el.id, title: el.layout.title && el.layout.title.text,
        drawn_title: (el.querySelector('.gtitle') || {}).textContent,
        x: el.layout.xaxis && el.layout.xaxis.title ? el.layout.xaxis.title.text : null,
        y: el.layout.yaxis && el.layout.yaxis.title ? el.layout.yaxis.title.text : null,
        names: el.data.map(t => t.name), bars: el.data.filter(t => t.type === 'bar').map(t => [t.y, t.x]),
        shape_y: (el.layout.shapes || []).map(s => s.y0),
        shapes_drawn: el.querySelectorAll('.shapelayer path').length}))""",
    )
    return result


def _shot(pg: Any, name: str) -> None:
    ARTEFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTEFACTS / f"{name}.png"), full_page=True)


def _answered(pg: Any) -> None:
    pg.wait_for_function(
        "() => { const s = document.querySelector('#status'); return s && "
        "(s.textContent.startsWith('answered') || document.querySelector('#error').textContent); }",
        timeout=120_000,
    )


def _shown(pg: Any) -> dict[str, tuple[str, float]]:
    """Every figure on the page: key -> (text, the SI scale of the shown number)."""
    items = pg.eval_on_selector_all(
        "[data-key]", "els => els.map(e => [e.dataset.key, e.textContent, Number(e.dataset.scale)])"
    )
    return {k: (t, s) for k, t, s in items}


def _lookup(obj: Any, key: str) -> Any:
    for part in key.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _cli(argv: list[str]) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())


def _assert_page_equals(shown: dict[str, tuple[str, float]], answer: dict[str, Any], what: str) -> int:
    """Each number on the page, times its scale, equals the JSON's value to the 4 significant digits shown."""
    compared = 0
    for key, (text, scale) in shown.items():
        value = _lookup(answer, key)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        m = NUMBER.search(text)
        assert m is not None, (what, key, text)
        number = float(m.group().replace(",", "")) * scale
        tol = 1e-3 * abs(value) + 0.5 * scale
        assert abs(number - value) <= tol, (what, key, text, value)
        compared += 1
    return compared


@pytest.mark.parametrize("name", list(PAGES))
def test_each_page_shows_the_apis_and_the_clis_numbers(server: str, page: Any, name: str) -> None:
    import httpx

    example = PAGES[name]
    page.goto(f"{server}#/{name}")
    _answered(page)
    assert page.text_content("#error") == ""
    _shot(page, name)
    scenario = yaml.safe_load((EXAMPLES / example).read_text())
    question = "simulate-series" if name == "simulate" else name
    api = httpx.post(f"{server}api/v1/{question}", json=scenario, timeout=120).json()
    api = api["answer"] if name == "simulate" else api
    argv = [name, str(EXAMPLES / example), "--json"] + (["--quiet"] if name in ("capacity", "simulate") else [])
    cli = _cli(argv)
    shown = _shown(page)
    assert _assert_page_equals(shown, api, f"{name} vs API") >= 3
    assert _assert_page_equals(shown, cli, f"{name} vs CLI") >= 3
    assert page.locator(".js-plotly-plot").count() >= (0 if name in ("capacity", "pack") else 1)
    for c in _charts(page):  # every chart has a drawn title, axis titles with units, legend entries named
        assert c["title"] and c["drawn_title"] == c["title"], (name, c)
        assert c["x"] is not None and c["y"], (name, c)
        assert all(n and "_" not in n for n in c["names"]), (name, c)  # readable, not raw keys
    if name in ("train", "memory", "infer"):  # the capacity line is drawn across the memory chart
        mem = next(c for c in _charts(page) if c["id"] == "chart-memory")
        capacity_gb = (
            _lookup(
                api,
                {
                    "train": "memory_capacity_bytes",
                    "memory": "capacity_bytes",
                    "infer": "memory_per_accelerator.capacity_bytes",
                }[name],
            )
            / 1e9
        )
        assert any(abs(y - capacity_gb) < 1e-9 for y in mem["shape_y"]), mem
        assert "(GB)" in mem["y"]


def test_capacity_with_simulation_runs_as_a_job_and_shows_the_clis_check(server: str, page: Any) -> None:
    import httpx

    page.goto(f"{server}#/capacity")
    _answered(page)
    page.check("#opt-simulate")
    page.wait_for_selector("[data-key='simulated.replicas_needed']", timeout=120_000)
    _answered(page)
    scenario = yaml.safe_load((EXAMPLES / PAGES["capacity"]).read_text())
    api = httpx.post(f"{server}api/v1/capacity?simulate=true", json=scenario, timeout=120).json()
    cli = _cli(["capacity", str(EXAMPLES / PAGES["capacity"]), "--simulate", "--json", "--quiet"])
    shown = _shown(page)
    assert any(k.startswith("simulated.closed_loop") for k in shown)
    assert _assert_page_equals(shown, api, "capacity --simulate vs API") >= 8
    assert _assert_page_equals(shown, cli, "capacity --simulate vs CLI") >= 8
    assert "o=" in page.url  # the option travels in the shared URL
    _shot(page, "capacity-simulate")


def test_schedule_page_follows_a_policy_change(server: str, page: Any) -> None:
    page.goto(f"{server}#/schedule")
    _answered(page)
    before = _shown(page)["utilisation_while_arriving_frac"][0]
    page.select_option("[data-path='schedule.policy']", "fifo")
    page.wait_for_function(
        f"() => document.querySelector(\"[data-key='utilisation_while_arriving_frac']\").textContent !== {before!r}",
        timeout=60_000,
    )  # fifo's utilisation differs (by the CLI)
    _answered(page)
    fifo = _cli(["schedule", str(EXAMPLES / "schedule-synthetic.yaml"), "--json", "--set", "schedule.policy=fifo"])
    assert _assert_page_equals(_shown(page), fifo, "schedule fifo vs CLI") >= 6
    assert page.locator("#t-schedule tbody tr").count() == 1 + len(fifo["by_size"])


def test_an_uploaded_trace_csv_is_scheduled(server: str, page: Any, tmp_path: Path) -> None:
    rows = ["job_id,arrival_s,gpus,duration_s,priority,user"] + [
        f"j{i},{10 * i},{1 + i % 8},{600 + 30 * i},0,u{i % 3}" for i in range(40)
    ]
    (tmp_path / "mine.csv").write_text("\n".join(rows) + "\n")
    page.goto(f"{server}#/schedule")
    _answered(page)
    page.set_input_files("#trace-file", str(tmp_path / "mine.csv"))
    page.wait_for_function(
        "() => document.querySelector(\"[data-key='jobs.finished']\").textContent === '40'", timeout=60_000
    )
    _answered(page)
    assert "40 jobs" in page.text_content("#trace-name")
    doc = yaml.safe_load((EXAMPLES / "schedule-synthetic.yaml").read_text())
    doc["schedule"].pop("generator")
    doc["schedule"]["trace"] = "mine.csv"
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    cli = _cli(["schedule", str(tmp_path / "s.yaml"), "--json"])
    assert _assert_page_equals(_shown(page), cli, "uploaded trace vs CLI") >= 6


def test_a_changed_field_re_answers_and_the_url_reproduces_it(server: str, page: Any, browser: Any) -> None:
    import httpx

    page.goto(f"{server}#/train")
    _answered(page)
    before = _shown(page)["time_to_train_s"][0]
    page.fill("[data-path='hardware.count']", "512")
    page.press("[data-path='hardware.count']", "Tab")
    page.wait_for_function(
        f"() => document.querySelector(\"[data-key='time_to_train_s']\").textContent !== {before!r}"
        " && document.querySelector('#status').textContent.startsWith('answered')",
        timeout=60_000,
    )
    scenario = yaml.safe_load((EXAMPLES / PAGES["train"]).read_text())
    scenario["hardware"]["count"] = 512
    api = httpx.post(f"{server}api/v1/train", json=scenario, timeout=60).json()
    cli = _cli(["train", str(EXAMPLES / PAGES["train"]), "--json", "--set", "hardware.count=512"])
    shown = _shown(page)
    assert _assert_page_equals(shown, api, "train 512 vs API") >= 5
    assert _assert_page_equals(shown, cli, "train 512 vs CLI") >= 5
    assert cli["accelerators_used"] <= 512
    shared = browser.new_page()
    shared.goto(page.url)
    _answered(shared)
    assert {k: t for k, (t, _) in _shown(shared).items()} == {k: t for k, (t, _) in shown.items()}
    assert shared.input_value("[data-path='hardware.count']") == "512"
    shared.close()


def test_a_bad_value_shows_the_apis_error_next_to_its_field(server: str, page: Any) -> None:
    import httpx

    page.goto(f"{server}#/infer")
    _answered(page)
    page.fill("[data-path='inference.slo.ttft_p90_s']", "-2")
    page.press("[data-path='inference.slo.ttft_p90_s']", "Tab")
    slot = "[data-err-for='inference.slo.ttft_p90_s']"
    page.wait_for_function(f'() => document.querySelector("{slot}").textContent.length > 0', timeout=30_000)
    scenario = yaml.safe_load((EXAMPLES / PAGES["infer"]).read_text())
    scenario["inference"]["slo"]["ttft_p90_s"] = -2
    r = httpx.post(f"{server}api/v1/infer", json=scenario, timeout=60)
    assert r.status_code == 422
    assert page.text_content(slot) == r.json()["detail"]["message"]
    assert "inference.slo.ttft_p90_s" in page.text_content(slot)
    _shot(page, "infer-bad-value")


def test_yaml_applied_in_the_page_answers_that_scenario(server: str, page: Any) -> None:
    page.goto(f"{server}#/memory")
    _answered(page)
    text = (EXAMPLES / "finetune-qlora-70b.yaml").read_text()
    page.click("text=Scenario as YAML")
    page.fill("#yaml", text)
    before = _shown(page)["total_params"][0]
    cli = _cli(["memory", str(EXAMPLES / "finetune-qlora-70b.yaml"), "--json"])
    page.click("#apply-yaml")
    # the new scenario's answer, not any "answered": its parameter count differs from the 7B example's
    page.wait_for_function(
        f"() => {{ const v = document.querySelector(\"[data-key='total_params']\"); "
        f"return document.querySelector('#f-model').value === 'meta-llama-2-70b' && v && "
        f"v.textContent !== {before!r} && !document.querySelector('#result.stale') && "
        "document.querySelector('#status').textContent.startsWith('answered'); }",
        timeout=60_000,
    )
    assert _assert_page_equals(_shown(page), cli, "memory qlora vs CLI") >= 2


def test_an_uploaded_config_json_becomes_the_model(server: str, page: Any) -> None:
    page.goto(f"{server}#/infer")
    _answered(page)
    page.set_input_files("#config-file", str(EXAMPLES / "configs" / "tiny-llama-config.json"))
    page.wait_for_function("() => document.querySelector('#f-model').value.startsWith('(uploaded')", timeout=30_000)
    _answered(page)
    assert page.text_content("#error") == ""
    assert "tiny-llama-config" in page.input_value("#f-model")


def test_a_long_simulation_can_be_cancelled(server: str, page: Any) -> None:
    scenario = yaml.safe_load((EXAMPLES / PAGES["simulate"]).read_text())
    scenario["inference"]["num_requests"] = 20_000
    scenario["inference"]["request_rate_per_s"] = 12
    import base64

    token = base64.urlsafe_b64encode(json.dumps(scenario).encode()).decode().rstrip("=")
    page.goto(f"{server}#/simulate?s={token}")
    page.wait_for_selector("#cancel:not([hidden])", timeout=10_000)
    assert "working" in page.text_content("#status")
    page.click("#cancel")
    page.wait_for_function("() => document.querySelector('#status').textContent === 'cancelled'", timeout=10_000)


def test_catalog_tables_are_searchable_with_sources_and_dates(server: str, page: Any) -> None:
    import httpx

    page.goto(f"{server}#/catalog?kind=accelerators")
    page.wait_for_selector("#t-catalog tbody tr")
    rows = httpx.get(f"{server}api/v1/catalog/accelerators").json()["rows"]
    assert page.locator("#t-catalog tbody tr").count() == len(rows)
    page.fill("#search", "h100")
    shown = page.eval_on_selector_all("#t-catalog tbody tr", "trs => trs.map(t => [t.hidden, t.textContent])")
    visible_texts = [text for hidden, text in shown if not hidden]
    assert visible_texts and all("h100" in t.lower() for t in visible_texts)
    assert all("h100" not in t.lower() for hidden, t in shown if hidden)
    assert len(visible_texts) < len(rows)  # the V100, A100, MI300X ... rows are hidden
    visible = page.locator("#t-catalog tbody tr:not([hidden])")
    for i in range(visible.count()):
        cells = visible.nth(i).locator("td")
        assert cells.nth(cells.count() - 2).text_content().strip() != ""  # sources
    _shot(page, "catalog")
    page.goto(f"{server}#/catalog?kind=prices")
    page.wait_for_selector("#t-catalog tbody tr")
    prices = httpx.get(f"{server}api/v1/catalog/prices").json()["rows"]
    assert page.locator("#t-catalog tbody tr").count() == len(prices)
    _shot(page, "catalog-prices")


def test_sorting_a_column_orders_the_rows(server: str, page: Any) -> None:
    page.goto(f"{server}#/cost")
    _answered(page)
    page.click("#t-cost th:has-text('total $')")
    values = page.eval_on_selector_all(
        "#t-cost tbody tr td:nth-child(8)", "tds => tds.map(t => Number(t.dataset.sort))"
    )
    assert values == sorted(values)


def test_the_itemised_bill_of_any_offer(server: str, page: Any) -> None:
    import httpx

    page.goto(f"{server}#/cost")
    _answered(page)
    api = httpx.post(
        f"{server}api/v1/cost", json=yaml.safe_load((EXAMPLES / PAGES["cost"]).read_text()), timeout=60
    ).json()
    last = len(api["options"]) - 1
    page.select_option("#bill-offer", str(last))
    costs = page.eval_on_selector_all("#t-bill tbody tr td:nth-child(5)", "tds => tds.map(t => t.dataset.sort)")
    expected = [-1 if it["cost_usd"] is None else it["cost_usd"] for it in api["options"][last]["items"]]
    assert [float(c) for c in costs] == pytest.approx(expected, rel=1e-12)


def test_validation_page_lists_every_row_and_filters(server: str, page: Any) -> None:
    import httpx

    page.goto(f"{server}#/validation?rows=training")
    page.wait_for_selector("#t-validation tbody tr", timeout=120_000)
    api = httpx.get(f"{server}api/v1/validate?rows=training", timeout=120).json()
    assert page.locator("#t-validation tbody tr").count() == len(api["cases"])
    assert _assert_page_equals(_shown(page), api, "validation summary") >= 2
    page.fill("#search", "narayanan")
    shown = page.locator("#t-validation tbody tr:not([hidden])").count()
    assert shown == sum("narayanan" in json.dumps(c).lower() for c in api["cases"])
    _shot(page, "validation")


def test_mig_page_lists_layouts_and_refuses_a_bad_one_next_to_the_field(server: str, page: Any) -> None:
    page.goto(f"{server}#/mig?accelerator=nvidia-a100-sxm4-80gb")
    page.wait_for_selector("#mig-count")
    layouts = _cli(["mig", "nvidia-a100-sxm4-80gb", "--json"])["full_layouts"]
    assert page.text_content("#mig-count").startswith(f"{len(layouts)} full layouts")
    # the user guide's A100 80GB limits: seven 1g.10gb (max instances column)
    row = page.locator("#t-mig tbody tr", has_text="1g.10gb").first
    assert row.locator("td").nth(5).text_content() == "7"
    _shot(page, "mig")
    page.fill("#mig-layout", "4g.40gb,4g.40gb")
    page.click("#mig-go")
    page.wait_for_function("() => document.querySelector(\"[data-err-for='layout']\").textContent.length > 0")
    assert "no room for a second 4g.40gb" in page.text_content("[data-err-for='layout']")


def test_home_and_api_docs_pages(server: str, page: Any) -> None:
    import httpx

    page.goto(server)
    page.wait_for_selector(".seeds li")
    _shot(page, "home")
    page.click("text=10,000 concurrent users")
    _answered(page)
    assert page.text_content("[data-key='chosen.accelerators']")
    page.goto(f"{server}api/docs")
    page.wait_for_selector(".endpoint")
    assert page.locator(".endpoint[data-path='/api/v1/train']").count() == 1
    curl = page.text_content("#example-curl")  # the example runs as printed, against this server
    url = re.search(r"'(http://[^']+)'", curl)
    assert url is not None and url.group(1) == f"{server}api/v1/infer"
    body = json.loads(re.search(r"-d '(\{.*\})'", curl).group(1))  # type: ignore[union-attr]
    assert httpx.post(url.group(1), json=body, timeout=60).status_code == 200
    _shot(page, "api-docs")


def test_no_script_comes_from_outside_the_server(server: str, page: Any) -> None:
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server) else None)
    page.goto(f"{server}#/tco")
    _answered(page)
    assert outside == []


def test_artefacts_dir_is_ignored_by_git() -> None:
    assert "test-artefacts/" in (ROOT / ".gitignore").read_text().split()


def test_the_cost_chart_has_one_bar_per_offer_and_the_page_no_sideways_scroll(server: str, page: Any) -> None:
    import httpx

    scenario = yaml.safe_load((EXAMPLES / "cost-serve-70b-5-regions.yaml").read_text())
    import base64

    token = base64.urlsafe_b64encode(json.dumps(scenario).encode()).decode().rstrip("=")
    page.goto(f"{server}#/cost?s={token}")
    _answered(page)
    api = httpx.post(f"{server}api/v1/cost", json=scenario, timeout=60).json()
    offers = [o["total_known_usd"] for o in api["options"] if o["total_known_usd"] is not None][:20]
    cost = next(c for c in _charts(page) if c["id"] == "chart-cost")
    ((labels, values),) = cost["bars"]
    assert len(labels) == len(set(labels)) == len(offers)  # no two offers share (and stack into) one bar
    assert values == pytest.approx(offers, rel=1e-12)
    assert cost["x"] == "total known cost (USD)"
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_an_error_clears_the_previous_answer(server: str, page: Any) -> None:
    page.goto(f"{server}#/train")
    _answered(page)
    assert page.locator("[data-key='accelerators_used']").count() == 1
    page.fill("[data-path='hardware.count']", "-5")
    page.press("[data-path='hardware.count']", "Tab")
    page.wait_for_function("() => document.querySelector('#error').textContent.length > 0", timeout=30_000)
    assert "hardware.count" in page.text_content("#error")
    assert page.locator("[data-key='accelerators_used']").count() == 0  # no stale "accelerators used 512"
    assert not page.text_content("#status").startswith("answered")


def test_each_page_keeps_its_own_state_and_the_url_follows_the_page(server: str, page: Any) -> None:
    page.goto(f"{server}#/mig?accelerator=nvidia-a100-sxm4-80gb")
    page.wait_for_selector("#mig-count")
    page.fill("#mig-layout", "4g.40gb,4g.40gb")  # typed, not submitted
    page.click("#nav a[data-page='catalog']")
    page.wait_for_selector("#t-catalog tbody tr")
    page.wait_for_timeout(500)
    assert page.url.endswith("#/catalog")
    assert page.text_content("#error") == ""
    page.click("#nav a[data-page='memory']")
    _answered(page)
    page.fill("[data-path='training.seq_len']", "8192")  # a field edited, then another page at once
    page.click("#nav a[data-page='infer']")
    _answered(page)
    page.wait_for_timeout(500)
    assert "#/infer" in page.url and page.text_content("#error") == ""
    assert page.locator("[data-key='ttft_s']").count() == 1


def test_smaller_readability_items(server: str, page: Any) -> None:
    page.goto(f"{server}#/capacity")
    _answered(page)
    assert page.locator("[data-unused='hardware.count']").is_disabled()  # capacity chooses the count
    ttft_tpot = page.eval_on_selector_all(
        "#t-capacity tbody tr",
        "trs => trs.map(t => [t.cells[9].textContent, t.cells[10].textContent, t.cells[11].textContent])",
    )
    assert all(x != "0" and y != "0" for x, y, _ in ttft_tpot)
    width = page.evaluate(
        "[document.querySelector('#example').getBoundingClientRect().right, "
        "document.querySelector('#form-panel').getBoundingClientRect().right]"
    )
    assert width[0] <= width[1]  # the example selector stays inside its panel
    page.click("#nav a[data-page='infer']")
    _answered(page)
    # the status may still read the capacity page's answer: wait for the infer page's own figures
    page.wait_for_selector("[data-key='ttft_s']", timeout=120_000)
    assert page.locator("#t-slo tbody tr").count() >= 1  # the SLO fields are compared, not silently ignored
    page.click("#nav a[data-page='datacenter']")
    _answered(page)
    it, facility = page.text_content("[data-key='it_power_w']"), page.text_content("[data-key='facility_power_w']")
    assert it.split()[-1] == facility.split()[-1]  # one unit for both


def test_capacity_page_shows_the_fleet_design_and_exports_the_deployment(server: str, page: Any) -> None:
    """The capacity page of a two-class example shows the mixed fleet (as the API) and its "Deploy it" button
    writes the CLI's launch command."""
    import httpx

    page.goto(f"{server}#/capacity")
    _answered(page)
    page.select_option("#example", "capacity-two-classes.yaml")
    page.wait_for_selector("#fleet-verdict", timeout=120_000)
    scenario = yaml.safe_load((EXAMPLES / "capacity-two-classes.yaml").read_text())
    api = httpx.post(f"{server}api/v1/capacity", json=scenario, timeout=120).json()
    assert page.text_content("#fleet-verdict") == api["fleet"]["verdict"]
    assert page.locator("#t-fleet-pools tbody tr").count() == len(api["fleet"]["mixed"]["pools"])
    chart = next(c for c in _charts(page) if c["id"] == "chart-fleet")
    assert chart["title"] and chart["y"]
    page.select_option("#export-format", "vllm")
    page.click("#export-go")
    page.wait_for_function("() => document.querySelector('#export-out').textContent.startsWith('vllm serve')")
    cli = _cli(["export", str(EXAMPLES / "capacity-two-classes.yaml"), "--format", "vllm", "--json"])
    assert page.text_content("#export-out") == cli["command_line"]
