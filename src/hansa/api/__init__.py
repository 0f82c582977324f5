"""The HTTP, SSE and WebSocket surface (thin: it validates, calls the engine, shapes JSON)."""
