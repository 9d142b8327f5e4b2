# Cardshelf in three stages: build (TypeScript to dist/, the web app to dist/app), production dependencies
# (`npm ci --omit=dev` on the built tree), and a slim runtime image running as `node`, not root.
# The image and its defaults are described in the README, "Container"; the Node.js line and why, in
# docs/deploy.md, "Runtime". scripts/ci-node-lts.sh reads both arguments below: CI tests the server on
# this Node.js line, with better-sqlite3 built against these headers.
ARG NODE_IMAGE=node:24-bookworm-slim
# better-sqlite3 12 (held there by Node.js 20, docs/deploy.md) subclasses node::ObjectWrap, whose
# inline destructor in the headers of Node.js 24.19 and later aborts the process when a statement is
# collected outside JavaScript (nodejs/node#65446). Built against an earlier 24.x's headers (the same
# ABI, as its prebuilt binaries are) it runs on every 24.x.
ARG NODE_ADDON_HEADERS=24.18.1

FROM ${NODE_IMAGE} AS build
ARG NODE_ADDON_HEADERS
WORKDIR /app
# better-sqlite3 compiles its addon, always (a prebuilt one may come from newer headers), against
# NODE_ADDON_HEADERS (node-gyp's target: it fetches those headers); the deps stage inherits both.
ENV npm_config_build_from_source=better-sqlite3 \
    npm_config_target=${NODE_ADDON_HEADERS}
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# The family web app (web/), built by `prepare` with Vite into dist/app.
COPY web ./web
RUN npm ci --no-audit --no-fund

FROM build AS deps
# A production install on the built tree: `prepare` keeps dist/ (the web app's included) when TypeScript is absent.
RUN rm -rf node_modules && npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    DATA_DIR=/data \
    LOAD_SHED_EVENT_LOOP_DELAY_MS=1000
WORKDIR /app
# Transcoding runs Debian's ffmpeg and ffprobe (security updates come with the base image's
# packages; the project ships no ffmpeg of its own).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg \
 && rm -rf /var/lib/apt/lists/*
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=deps --chown=root:root /app/dist ./dist
COPY --chown=root:root package.json NOTICE ./
COPY --chown=root:root bin ./bin
COPY --chown=root:root scripts/healthcheck.js ./scripts/healthcheck.js
# The SQLite store and the local issuer's key live in /data (unused with DATABASE_URL and an
# external issuer, but always writable by the service's user).
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "scripts/healthcheck.js"]
# SIGTERM (docker stop) drains requests in flight, then exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/cardshelf.js"]
CMD ["serve"]
