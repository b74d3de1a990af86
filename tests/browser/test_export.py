"""Export in a real browser: the download links save files, in every format, with the right rows."""

from __future__ import annotations

import json
import time

import pytest
from selenium.webdriver.common.by import By

from .conftest import htmx_settled, login, wait_for


@pytest.fixture(scope="module")
def server(workspace, browser):
    login(browser, workspace)
    return workspace


@pytest.fixture
def downloads(browser, tmp_path):
    browser.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)}
    )
    yield tmp_path
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "default"})


def download(browser, folder, fmt: str):
    before = set(folder.iterdir())
    browser.find_element(By.CSS_SELECTOR, f"#export-downloads a[data-format='{fmt}']").click()
    deadline = time.monotonic() + 60  # a busy machine; never reached when all works
    while time.monotonic() < deadline:
        new = [p for p in set(folder.iterdir()) - before if not p.name.endswith(".crdownload")]
        if new:
            return new[0]
        time.sleep(0.05)
    raise AssertionError(f"no {fmt} download appeared in {folder}")


def test_each_download_link_saves_a_file_with_the_live_memories(browser, server, downloads):
    browser.get(server.url("/export"))
    wait_for(browser, htmx_settled)
    formats = [
        a.get_attribute("data-format")
        for a in browser.find_elements(By.CSS_SELECTOR, "#export-downloads a[download]")
    ]
    assert len(formats) >= 3, formats
    for fmt in formats:
        saved = download(browser, downloads, fmt)
        text = saved.read_text(encoding="utf-8-sig")
        assert "package_manager" in text or "Package Manager" in text, (fmt, saved.name)
        assert "The old API lived at /v1." not in text, f"{fmt}: a soft-deleted row in a live export"
        if saved.suffix == ".json":
            json.loads(text)
    assert browser.current_url.endswith("/export"), "a download navigated away from the page"


def test_including_invisible_rows_changes_the_links_and_the_file(browser, server, downloads):
    browser.get(server.url("/export"))
    wait_for(browser, htmx_settled)
    browser.find_element(By.NAME, "include_invisible").click()
    browser.find_element(By.CSS_SELECTOR, "#export-options button[type=submit]").click()
    wait_for(
        browser,
        lambda d: d.find_element(By.ID, "export-downloads").get_attribute("data-include-invisible") == "1",
        "the links were not updated",
    )
    assert "include_invisible=1" in browser.current_url
    saved = download(browser, downloads, "json")
    assert "The old API lived at /v1." in saved.read_text(encoding="utf-8-sig")
