# syntax=docker/dockerfile:1
# Build stage: full dependencies, compile TypeScript, then drop devDependencies.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
# Only the service and its console (built from console/ with the typed client package, which
# `npm run build` makes from client/ first): the development database and the benchmarks
# (tools/, bench/) stay outside.
COPY src ./src
COPY console ./console
COPY client/package.json client/tsconfig.package.json ./client/
COPY client/scripts/build-package.mjs ./client/scripts/
COPY client/src ./client/src
RUN npm run build && npm prune --omit=dev --ignore-scripts

# Runtime stage: production dependencies and compiled code only, as the unprivileged node user.
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
USER node
EXPOSE 3000
# Liveness only: readiness (/health/ready) depends on the database and belongs to the orchestrator.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# MONGODB_URI and ADMIN_API_KEY are required in production; SIGTERM finishes in-flight requests.
CMD ["node", "dist/main.js"]
