"""Error text for job rows and report issues (pure: no Django)."""


def short(exc: BaseException, limit: int) -> str:
    """``exc``'s message (its type's name when it has none), cut to ``limit`` characters."""
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
