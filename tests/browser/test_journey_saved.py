"""Saved conversations are memory too (#34): About you says the person's data is also in agentao's
saved conversations → forget me → the verified report names each conversation file as erased,
at 1280×900 and 390×844.  The outcome is read from the files, and through agentao's own loader."""

from __future__ import annotations

import pytest
from agentao.embedding.sessions import list_sessions
from saved_world import PHONE as NUMBER
from saved_world import conversation, replay
from selenium.webdriver.common.by import By

from .conftest import DESKTOP, PHONE, Agent, finished_job, in_viewport, seed, serving, wait_for


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_about_you_to_forget_me_erases_the_saved_conversations(browser, tmp_path, size):
    agent = seed(Agent(tmp_path))
    first, sid = conversation(agent.project_dir)
    replay(agent.project_dir, sid)
    second, _ = conversation(agent.project_dir, said="Mail me at robin.k@posteo.de please.")
    with serving(browser, agent, size=size) as server:
        browser.get(server.url("/about"))
        said = browser.find_element(By.CSS_SELECTOR, '[data-field="about-saved"]')
        assert "also in 2 saved conversations" in said.text
        assert browser.find_elements(By.CSS_SELECTOR, f'#about-saved tr[data-file="{first.name}"]')
        browser.find_element(By.ID, "forget-about").click()
        wait_for(browser, lambda d: d.find_elements(By.ID, "about-confirm"), "no forget-me dry run")
        plan = browser.find_element(By.CSS_SELECTOR, "[data-field=saved-files]")
        assert first.name in plan.text and second.name in plan.text
        browser.find_element(By.ID, "about-confirm").send_keys("forget me")
        browser.find_element(By.CSS_SELECTOR, "[data-action=forget-about]").click()
        job = finished_job(browser)
        assert job.get_attribute("data-verdict") == "verified erased", job.text
        assert in_viewport(browser, job.find_element(By.CSS_SELECTOR, "[data-field=verdict]"))
        for path in (first, second):
            row = job.find_element(By.CSS_SELECTOR, f'[data-field=saved-files] li[data-file="{path.name}"]')
            assert row.get_attribute("data-status") == "erased" and "erased" in row.text
            assert NUMBER not in path.read_text() and "posteo" not in path.read_text()
        assert len(list_sessions(agent.project_dir)) == 2  # agentao still lists both, redacted
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
