"""Take the README's screenshots from the demo data: ``python -m tests.browser.readme_screenshots``.

Not a test (pytest does not collect it): it starts ``python -m dashboard --demo``
the way the README says, opens it in the same headless Chromium the browser
tests use, and writes docs/screenshot-*.png: the overview, the memories, the
suggestions and the preview at 1280×900, the overview and the memories at 390×844,
and the overview in Chinese.  The demo has Chinese text: install a CJK font first
(Debian: fonts-wqy-microhei), or it shows as boxes.
"""

from __future__ import annotations

from selenium.webdriver.common.by import By

from .conftest import DESKTOP, PHONE, REPO, Server, htmx_settled, login, quit_browser, start_browser, wait_for

# name: (path, window size, height of the shot or None for the page's own, up to MAX_HEIGHT)
SHOTS = {
    "screenshot-overview.png": ("/overview", DESKTOP, None),
    "screenshot-memories.png": ("/memories", DESKTOP, 900),
    "screenshot-reviews.png": ("/reviews", DESKTOP, 900),
    "screenshot-preview.png": ("/preview?q=how+do+I+deploy&go=1", DESKTOP, 900),
    "screenshot-overview-phone.png": ("/overview", PHONE, 844),
    "screenshot-memories-phone.png": ("/memories", PHONE, 844),
}
CHINESE = {"screenshot-overview-zh.png": ("/overview", DESKTOP, 900)}
MAX_HEIGHT = 1600


def shoot(driver, server, shots) -> None:
    for name, (path, size, height) in shots.items():
        driver.set_window_size(*size)
        driver.get(server.url(path))
        wait_for(driver, htmx_settled)
        if height is None:
            height = min(MAX_HEIGHT, driver.execute_script("return document.documentElement.scrollHeight"))
        driver.set_window_size(size[0], height)
        wait_for(driver, htmx_settled)
        out = REPO / "docs" / name
        out.parent.mkdir(exist_ok=True)
        driver.save_screenshot(str(out))
        print(f"{out.relative_to(REPO)}: {path} at {size[0]} px")


def main() -> None:
    server = Server([], None, extra=["--demo"])
    driver = start_browser()
    try:
        login(driver, server)
        shoot(driver, server, SHOTS)
        driver.set_window_size(*DESKTOP)
        driver.get(server.url("/overview"))
        driver.find_element(By.CSS_SELECTOR, "#language-switch option[value='zh_Hans_CN']").click()
        driver.find_element(By.CSS_SELECTOR, "#language-switcher button").click()
        wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-Hans-CN")
        shoot(driver, server, CHINESE)
    finally:
        quit_browser(driver)
        server.stop()


if __name__ == "__main__":
    main()
