# One service node. The TypeScript runs through tsx (a runtime dependency), so there is no build step.
#   docker build -t parlay-clob .
#   docker run -p 8080:8080 -e DATABASE_URL=... -e KAFKA_BROKERS=... -e ... parlay-clob
# Production refuses to start without PLATFORM_JWT_SECRET, CLOB_JWT_SECRET, CLOB_INTERNAL_TOKEN,
# DATABASE_URL and SOLANA_RPC_URL (src/config.ts).
FROM node:24-slim

WORKDIR /app
ENV NODE_ENV=production APP_ENV=production PORT=8080

# Dependencies first, so that source edits reuse this layer.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Sources (see .dockerignore), owned by root and read-only for the service user. ./data is only
# used by the embedded PGlite database (no DATABASE_URL), which production never uses.
COPY . .
RUN mkdir -p /app/data && chown node:node /app/data

USER node
EXPOSE 8080

# Liveness only; /readyz also checks the database, the Kafka assignment and the chain RPC.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# One process (no npm/npx wrapper), so SIGTERM reaches src/main.ts, which closes the node cleanly.
CMD ["node", "--import", "tsx", "src/main.ts"]
