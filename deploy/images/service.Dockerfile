# Metadata only, on the root file system scripts/build-images.sh imported (@BASE@): `docker import`
# cannot set a HEALTHCHECK. Adds no layer, so the image's layer digest stays reproducible.
FROM @BASE@
# The process is up: /healthz of the service's HTTP port (readiness is /readyz, for orchestrators that route).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=6 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.WRIT_HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
