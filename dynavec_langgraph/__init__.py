"""dynavec_langgraph."""
