# Metadata only, on the root file system scripts/build-images.sh imported (@BASE@): `docker import`
# cannot set a HEALTHCHECK. Adds no layer, so the image's layer digest stays reproducible.
FROM @BASE@
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=12 \
  CMD ["sh", "-c", "pg_isready -q -h 127.0.0.1 -U \"${POSTGRES_USER:-postgres}\""]
