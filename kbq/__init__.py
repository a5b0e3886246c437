"""kbq: a declarative knowledge base about deep-learning workloads and the GPUs they need."""

from kbq.version import __version__

__all__ = ["KnowledgeBase", "__version__"]


def __getattr__(name: str) -> object:
    # Lazy so that `import kbq` stays cheap for the CLI's fast paths.
    if name == "KnowledgeBase":
        from kbq.api import KnowledgeBase

        return KnowledgeBase
    raise AttributeError(name)
