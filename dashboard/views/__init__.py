"""One blueprint per screen; the blueprint name is its URL prefix and template folder."""

from .about import bp as about_bp
from .activity import bp as activity_bp
from .activity import pulse  # noqa: F401  (the live pulse: routes on the activity blueprint)
from .checks import bp as checks_bp
from .conversations import bp as conversations_bp
from .export import bp as export_bp
from .findings import bp as findings_bp
from .forget import bp as forget_bp
from .language import bp as language_bp
from .memories import bp as memories_bp
from .overview import bp as overview_bp
from .preview import bp as preview_bp
from .projects import bp as projects_bp
from .reviews import bp as reviews_bp
from .summaries import bp as summaries_bp

ALL_BLUEPRINTS = [
    overview_bp,
    about_bp,
    projects_bp,
    memories_bp,
    summaries_bp,
    findings_bp,
    reviews_bp,
    conversations_bp,
    forget_bp,
    preview_bp,
    export_bp,
    language_bp,
    activity_bp,
    checks_bp,
]
