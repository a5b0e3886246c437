"""`kbq serve`: the SPARQL 1.1 endpoint, /ask, the web page, the worker pool and the query guard."""
