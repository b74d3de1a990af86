"""Take the README's screenshots from the demo data: ``python -m tests.browser.readme_screenshots``.

Not a test (pytest does not collect it): it starts ``python -m dashboard --demo``
the way the README says, opens it in the same headless Chromium the browser
tests use, and writes docs/screenshot-overview.png and docs/screenshot-memories.png.
The demo has Chinese text: install a CJK font first (Debian: fonts-wqy-microhei),
or it shows as boxes.
"""

from __future__ import annotations

from .conftest import DESKTOP, REPO, Server, htmx_settled, login, quit_browser, start_browser, wait_for

# name: (path, height) -- the overview is taller so its pictures are in the shot.
SHOTS = {"screenshot-overview.png": ("/overview", None), "screenshot-memories.png": ("/memories", 900)}
MAX_HEIGHT = 2000


def main() -> None:
    server = Server([], None, extra=["--demo"])
    driver = start_browser()
    try:
        login(driver, server)
        driver.set_window_size(*DESKTOP)
        for name, (path, height) in SHOTS.items():
            driver.set_window_size(*DESKTOP)
            driver.get(server.url(path))
            wait_for(driver, htmx_settled)
            if height is None:
                height = min(MAX_HEIGHT, driver.execute_script(
                    "return document.documentElement.scrollHeight"))
            driver.set_window_size(DESKTOP[0], height)
            out = REPO / "docs" / name
            out.parent.mkdir(exist_ok=True)
            driver.save_screenshot(str(out))
            print(f"{out.relative_to(REPO)}: {path}")
    finally:
        quit_browser(driver)
        server.stop()


if __name__ == "__main__":
    main()
