"""Bearer tokens, CSRF tokens and the sign-in endpoints."""
