import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { AuthVariables } from './auth';
import { ClusterVariables } from './clusters';
import { DatabaseVariables } from './database';
import { EventsVariables } from './events';
import { FilesVariables } from './files';
import { IdempotencyVariables } from './idempotency';
import { LifecycleVariables } from './lifecycle';
import { LimitsVariables } from './limits';
import { ObservabilityVariables } from './observability';
import { OidcVariables } from './oidc';
import { RuntimeVariables } from './runtime';
import { UsageVariables } from './usage';
import { WebhookVariables } from './webhooks';

export {
  AuthVariables,
  ClusterVariables,
  DatabaseVariables,
  EventsVariables,
  FilesVariables,
  IdempotencyVariables,
  LifecycleVariables,
  LimitsVariables,
  ObservabilityVariables,
  OidcVariables,
  RuntimeVariables,
  UsageVariables,
  WebhookVariables,
};

/**
 * Every environment variable the service reads, one class per section, in the order `.env.example`
 * documents them; keep the two in step. Problems are reported in this order.
 */
export const ENVIRONMENT_SECTIONS = {
  runtime: RuntimeVariables,
  observability: ObservabilityVariables,
  auth: AuthVariables,
  oidc: OidcVariables,
  database: DatabaseVariables,
  clusters: ClusterVariables,
  limits: LimitsVariables,
  lifecycle: LifecycleVariables,
  events: EventsVariables,
  webhooks: WebhookVariables,
  files: FilesVariables,
  idempotency: IdempotencyVariables,
  usage: UsageVariables,
} as const;

type Sections = typeof ENVIRONMENT_SECTIONS;

/** The environment as read: each section's variables, converted and with their defaults. */
export type Environment = { [S in keyof Sections]: InstanceType<Sections[S]> };

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((e) =>
    Object.values(e.constraints ?? {}).map((message) =>
      message.startsWith(e.property) ? message : `${e.property}: ${message}`,
    ),
  );
}

/**
 * Reads every section from `env` and validates it. The problems of all sections come back
 * together, so that one pass fixes a broken deployment.
 */
export function readEnvironment(env: NodeJS.ProcessEnv): {
  vars: Environment;
  problems: string[];
} {
  // Empty strings mean "unset" (docker --env-file and compose often produce them).
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ''),
  );
  const problems: string[] = [];
  const read = <T extends object>(section: new () => T): T => {
    const vars = plainToInstance(section, present, { excludeExtraneousValues: false });
    problems.push(
      ...describe(validateSync(vars, { forbidUnknownValues: false, stopAtFirstError: true })),
    );
    return vars;
  };
  const vars = Object.fromEntries(
    Object.entries(ENVIRONMENT_SECTIONS).map(([name, section]) => [name, read<object>(section)]),
  ) as Environment;
  return { vars, problems };
}
