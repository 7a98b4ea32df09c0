"""dynavec's DynamoDB checkpointer, one module per part (the public module is
:mod:`dynavec_langgraph.dynamodb`).

``values`` (dynavec's value encoding, boto3), ``table`` (the table and its requests, the
errors that say what to set), ``records`` (the item layout: checkpoint items, pieces, the
manifest's history, the records kept in memory), ``lock`` (the resume lock across processes and
machines) and ``checkpointer`` (``DynamoDBCheckpointer``: saving, reading, deleting, listing).
"""
