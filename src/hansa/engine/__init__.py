"""The behaviour: turn pipeline, routing, context, thinking, workers."""
