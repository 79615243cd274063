# One image recipe for every Writ service: `--build-arg SERVICE=<name>`.
# Built from the repository root (see docker-compose.yml); needs a registry
# for the node:24 base image.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
 && NX_NO_CLOUD=true NX_DAEMON=false npx nx run-many -t build --output-style=static \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ARG SERVICE
ENV SERVICE=${SERVICE} NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/libs ./libs
COPY --from=build /src/services ./services
COPY --from=build /src/apps ./apps
# The executor drives the Docker Engine through its socket and prepares cell
# workspaces owned by the cell user, so it runs as root; every other service does not.
RUN mkdir -p /var/lib/writ/keys && chown node:node /var/lib/writ/keys
USER node
HEALTHCHECK --interval=10s --timeout=3s --retries=6 CMD node -e "fetch('http://127.0.0.1:'+(process.env.WRIT_HTTP_PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["sh", "-c", "exec node services/$SERVICE/dist/main.js"]
