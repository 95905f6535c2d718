"""Text cut to fit a row or a line: error messages on job and image rows, report issues, the
fetcher's refusals (pure: no Django import, so ingest's pure modules may use it too)."""

ELLIPSIS = "…"


def truncate(text: str | BaseException, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last of them an ellipsis when cut.

    An exception stands for its message, or for its type's name when it has none (a bare
    ``TimeoutError()`` says nothing by itself).
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    if isinstance(text, BaseException):
        text = str(text) or type(text).__name__
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
