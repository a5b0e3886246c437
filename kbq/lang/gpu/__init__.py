"""GPU questions, split by concern: constraints (what a GPU must meet), columns (what an answer
shows), ordering (profiles and the score), explain (the answer's words), question (the SELECT)."""
