"""Persistence: dynavec's checkpoint records and checkpointers (``records``) and DynamoDB
(``dynamodb``). The public modules in front are :mod:`dynavec_langgraph.checkpoint`,
:mod:`dynavec_langgraph.dynamodb` and :mod:`dynavec_langgraph.savers`."""
