# Metadata only, on the root file system scripts/build-images.sh imported (@BASE@): `docker import`
# cannot set a HEALTHCHECK. Adds no layer, so the image's layer digest stays reproducible.
FROM @BASE@
# JetStream enabled and current: the monitor port's /healthz (WRIT_NATS_MONITOR_PORT, default 8222;
# the image has no HTTP client, so bash's /dev/tcp asks).
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=12 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${WRIT_NATS_MONITOR_PORT:-8222} && printf 'GET /healthz?js-enabled-only=true HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
