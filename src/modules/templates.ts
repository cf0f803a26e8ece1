// Parlay templates and suggestions as a module of the node: priced from the order book's quotes.
import type { Config } from '../config.ts';
import { TemplateService, type TemplateServiceDeps } from '../templates/service.ts';
import { templateRoutes } from '../http/routes/templates.ts';
import type { Edge } from '../http/edge.ts';
import type { Infrastructure } from './infrastructure.ts';

export function templatesModule(cfg: Config, infra: Infrastructure, o: { quote: TemplateServiceDeps['quote'] }) {
  const service = new TemplateService({
    db: infra.db,
    transaction: (fn) => (infra.orm.em.fork() as any).transactional((em: any) => fn(em)),
    quote: o.quote,
    mintMerge: cfg.mintMergeMatching,
  });
  return { service, routes: (edge: Edge) => [templateRoutes(service, { jwtSecret: cfg.platformJwtSecret, edge })] };
}
