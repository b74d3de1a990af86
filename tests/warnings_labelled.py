"""Labelled (evidence, candidate content, contradicts) triples for the ``contradicts_evidence``
warning (dashboard/actions/polarity.py), scored by ``score`` below (tests/test_reviews_warnings.py
holds the floor; bench/bench_warnings.py prints the misses and times the rule).

``CRYSTALLIZED``: the evidence is a user message as a user writes it; the
content and the evidence are exactly what agentao 0.5.17's
``MemoryCrystallizer.extract_from_summary`` made of it (generated once by
running it, kept here as data).  ``HAND``: pairs written by hand — candidates
edited or paraphrased by a person or another tool, reversals, negations after
the content, and Chinese compounds that hold a negation character but negate
nothing.  The label says whether approving the content would save the
opposite of what the user said (True) or not (False); it was written by
reading the pair, not by running the rule.
"""

from __future__ import annotations

CRYSTALLIZED: list[tuple[str, str, bool]] = [
    ("please never use emojis in commit messages", "use emojis in commit messages", True),
    ("Never push directly to main, open a PR", "push directly to main", True),
    ("don't mock the database in integration tests", "mock the database in integration tests", True),
    ("Do not add type: ignore comments without a reason", "add type: ignore comments without a reason", True),
    ("we must not log user emails anywhere", "log user emails anywhere", True),
    ("You must not commit the .env file", "commit the", True),
    ("dont use print for debugging, use the logger", "use print for debugging", True),
    ("Never run migrations on Friday afternoons", "run migrations on Friday afternoons", True),
    ("don't ever force-push to shared branches", "ever force-push to shared branches", True),
    ("I prefer not to use mocks in integration tests", "not to use mocks in integration tests", False),
    ("I want no trailing whitespace in diffs", "no trailing whitespace in diffs", False),
    ("I like to avoid global state in the services", "to avoid global state in the services", False),
    ("I prefer tabs over spaces", "tabs over spaces", False),
    ("always run the tests before pushing", "run the tests before pushing", False),
    ("always pin dependencies with uv lock", "pin dependencies with uv lock", False),
    ("We must use black for formatting", "use black for formatting", False),
    ("Don't worry about lint, I prefer tabs over spaces", "tabs over spaces", False),
    ("Don't worry about lint, I prefer tabs over spaces", "worry about lint", True),
    ("It's not urgent, but I prefer small PRs", "small PRs", False),
    ("I use neovim with lazy.nvim", "neovim with lazy", False),
    ("we decided to use Postgres, not MySQL", "use Postgres", False),
    ("let's use ruff instead of flake8", "ruff instead of flake8", False),
    ("I no longer use black, switching to ruff", "ruff", False),
    ("switching to httpx for HTTP calls", "httpx for HTTP calls", False),
    ("I want commit messages without emojis", "commit messages without emojis", False),
    ("Never squash merge feature branches", "squash merge feature branches", True),
    ("I like pytest; never use unittest", "pytest", False),
    ("I like pytest; never use unittest", "use unittest", True),
    ("do not squash merge release branches", "squash merge release branches", True),
    ("Must keep the API backwards compatible", "keep the API backwards compatible", False),
    ("workflow: lint, test, then build the wheel", "lint, test, then build the wheel", False),
    ("永远不要提交 .env 文件", "要提交 .env 文件", True),
    ("禁止在主分支上直接推送", "在主分支上直接推送", True),
    ("不要在代码里写死端口", "在代码里写死端口", True),
    ("从不在周五发布", "在周五发布", True),
    ("必须在合并前跑完测试", "在合并前跑完测试", False),
    ("我喜欢不加分号的风格", "不加分号的风格", False),
    ("我们决定不用 Redis 做缓存", "不用 Redis 做缓存", False),
    ("我偏好用 pytest 写测试", "用 pytest 写测试", False),
    ("我们决定采用 PostgreSQL", "采用 PostgreSQL", False),
    ("不要用 print 调试，用 logging", "用 print 调试", True),
    ("千万不要在生产库上跑迁移", "在生产库上跑迁移", True),
    ("我喜欢简洁的提交信息", "简洁的提交信息", False),
    ("我们改用 uv 管理依赖", "uv 管理依赖", False),
    ("我想用 vim 写代码", "vim 写代码", False),
    ("这个不错，我喜欢用 ruff", "用 ruff", False),
    ("流程：先跑 lint，再跑测试", "先跑 lint，再跑测试", False),
    ("禁止使用 eval", "使用 eval", True),
    ("我倾向于不写注释", "不写注释", False),
    ("不要把密钥写进日志", "把密钥写进日志", True),
    ("必须使用类型注解", "使用类型注解", False),
]

HAND: list[tuple[str, str, bool]] = [
    # --- the negation dropped or reversed --------------------------------------------
    ("Please never put emojis in commit messages", "Use emojis in commit messages", True),
    ("Always use emojis in commit messages", "Never use emojis in commit messages", True),
    ("I no longer use black", "use black", True),
    ("stop using print statements for debugging", "using print statements for debugging", True),
    ("Please avoid raw SQL in the views", "raw SQL in the views", True),
    ("we don't deploy on Fridays anymore", "deploy on Fridays", True),
    ("we don't use Docker for local dev", "use Docker for local dev", True),
    ("No more force pushes to main please", "force pushes to main", True),
    ("Stop adding __init__.py to the test folders", "adding __init__.py to the test folders", True),
    ("avoid using global variables", "using global variables", True),
    ("I'd rather not use ORMs", "use ORMs", True),
    ("tests must never hit the network", "hit the network", True),
    ("The linter does not run on generated files", "The linter runs on generated files", True),
    ("Don\u2019t rebase public branches", "rebase public branches", True),
    ("Use emojis? No, never in commit messages", "use emojis", True),
    ("I used to prefer spaces, not anymore", "spaces", True),
    ("不要用表情符号写提交信息", "用表情符号写提交信息", True),
    ("别用 print 调试", "用 print 调试", True),
    ("请勿在生产环境调试", "在生产环境调试", True),
    ("不准直接改数据库", "直接改数据库", True),
    ("我不再使用 black 了", "使用 black", True),
    ("我从不用 Windows 开发", "用 Windows 开发", True),
    ("我们不用 Redis 做缓存", "用 Redis 做缓存", True),
    ("请不要自动格式化 SQL 文件", "自动格式化 SQL 文件", True),
    ("没有必要写 changelog", "写 changelog", True),
    ("不必每次都重建镜像", "每次都重建镜像", True),
    ("我们决定不再支持 Python 3.8", "支持 Python 3.8", True),
    ("总是在提交前运行测试", "不要在提交前运行测试", True),
    # --- the negation kept, or another clause's ----------------------------------------
    ("Don't use tabs in YAML files", "don't use tabs in YAML files", False),
    ("Never commit secrets", "Never commit secrets", False),
    ("I'd rather not use ORMs", "not use ORMs", False),
    ("I don't mind either way, we decided to use Postgres", "use Postgres", False),
    ("not sure why, but I prefer dark mode in the dashboard", "dark mode in the dashboard", False),
    ("never mind that \u2014 I prefer small commits", "small commits", False),
    ("I can't stand long functions; I prefer short ones", "short ones", False),
    ("Run the linter, not the formatter, on save", "Run the linter", False),
    (
        "don't bother with docstrings for private helpers; always type public functions",
        "type public functions",
        False,
    ),
    ("The CI is not flaky anymore; we decided to use GitHub Actions", "use GitHub Actions", False),
    ("Don't forget: always run the tests before pushing", "run the tests before pushing", False),
    ("never use unittest, I like pytest", "pytest", False),
    ("Avoid mocks in integration tests", "avoid mocks in integration tests", False),
    ("We stopped using Jenkins. Going to use GitHub Actions", "GitHub Actions", False),
    ("部署时不同环境用不同配置", "不同环境用不同配置", False),
    ("我特别喜欢用 vim 写 Python", "用 vim 写 Python", False),
    ("没错，我们决定采用 FastAPI", "采用 FastAPI", False),
    ("不确定的时候，我喜欢先写测试", "先写测试", False),
    ("不过我喜欢用 tabs", "用 tabs", False),
    ("我们决定不再支持 Python 3.8", "不再支持 Python 3.8", False),
    ("不要在代码里写死端口", "不要在代码里写死端口", False),
    ("禁止在日志里打印密码", "禁止在日志里打印密码", False),
    ("这个库不错，我们决定采用 httpx", "采用 httpx", False),
    ("我不太确定，但我偏好小的 PR", "小的 PR", False),
    ("别人都用 conda，我喜欢用 uv", "用 uv", False),
]

PAIRS: list[tuple[str, str, bool]] = CRYSTALLIZED + HAND


def score(pairs) -> tuple[float, float, list, list]:
    """(precision, recall, misses, false alarms) of the rule over ``pairs``."""
    from dashboard.actions.polarity import contradicts

    tp = fp = fn = 0
    misses, alarms = [], []
    for evidence, content, label in pairs:
        said = contradicts(evidence, content)
        tp += said and label
        fp += said and not label
        fn += label and not said
        if label and not said:
            misses.append((evidence, content))
        if said and not label:
            alarms.append((evidence, content))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, misses, alarms
