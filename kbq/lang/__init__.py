"""The kbq question language: parse (Lark) -> AST -> SPARQL, and the answers' explanations."""
