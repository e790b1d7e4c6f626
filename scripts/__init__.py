"""Developer scripts (screenshots) and the browser driver the end-to-end test shares with them."""
