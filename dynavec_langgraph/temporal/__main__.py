"""``python -m dynavec_langgraph.temporal --address HOST:PORT --task-queue Q --agent mod:attr``."""

from dynavec_langgraph.temporal._worker import main

if __name__ == "__main__":
    main()
