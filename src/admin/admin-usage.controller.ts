import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Auth, NeedsNoScope } from '../auth';
import { ProblemDto } from '../common/errors';
import { NDJSON, sendLines } from '../common/http/ndjson';
import { ApiKeysetPage, nextPageLink, parseKeysetPage } from '../common/pagination/keyset-page';
import { TENANT_KINDS, type Tenant, type TenantKind } from '../common/tenancy/namespace';
import { APP_CONFIG, type AppConfig } from '../config';
import { parseDayRange, rowKeyOf, UsageRowDto, UsageService, type UsageRow } from '../usage';

/** A row cursor: `<day>/<kind>/<id>`, the order rows are listed in. */
const ROW_CURSOR = /^\d{4}-\d{2}-\d{2}\/(user|team)\/.+$/;
/** `tenant=<kind>:<id>`: a user by subject, a team by id. */
const TENANT_PARAM = /^(user|team):(.+)$/s;

function tenantParam(value: string | undefined): Tenant | undefined {
  const match = value === undefined ? null : TENANT_PARAM.exec(value);
  return match ? { kind: match[1] as TenantKind, id: match[2] as string } : undefined;
}

/** Every tenant's usage per UTC day, for billing (docs/usage.md). */
@ApiTags('admin')
@ApiExtraModels(UsageRowDto)
@Controller('admin')
@NeedsNoScope()
@Auth('operator')
export class AdminUsageController {
  constructor(
    private readonly usage: UsageService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Usage per tenant and UTC day from `from` to `to` (both included; at most 366 days; default:
   * the 31 days to today), ordered by day then tenant (`user`/`team`, then id); `tenant` keeps
   * one tenant's. A row is there when the tenant used something that day or the day's
   * snapshot measured what it stored (`itemsStored`, `fileBytesStored` at `measuredAt`; null
   * when not measured). JSON: a keyset page, `Link: <…>; rel="next"` while more follow. With `Accept:
   * application/x-ndjson`: every row of the range, one per line (gzip when Accept-Encoding
   * allows), for billing; `after[row]` resumes such an export after the last row received.
   */
  @Get('usage')
  @ApiKeysetPage('row', ROW_CURSOR.source, 'the rows after that one (`<day>/<kind>/<id>`)')
  @ApiQuery({ name: 'from', required: false, schema: { type: 'string', format: 'date' } })
  @ApiQuery({ name: 'to', required: false, schema: { type: 'string', format: 'date' } })
  @ApiQuery({
    name: 'tenant',
    required: false,
    description: "One tenant's rows: `user:<subject>` or `team:<team id>`",
    schema: { type: 'string', pattern: TENANT_PARAM.source },
  })
  @ApiOkResponse({
    description: 'A page (JSON; `Link` names the next one), or every row (NDJSON)',
    content: {
      'application/json': {
        schema: { type: 'array', items: { $ref: getSchemaPath(UsageRowDto) } },
      },
      [NDJSON]: { schema: { $ref: getSchemaPath(UsageRowDto) } },
    },
  })
  @ApiBadRequestResponse({
    type: ProblemDto,
    description:
      'VALIDATION_FAILED: `from` or `to` is not a UTC day (YYYY-MM-DD), `from` is after `to`, the range is longer than 366 days, `tenant` is not `user:<subject>` or `team:<id>`, or a wrong page parameter',
  })
  async listUsage(
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: { field: 'row', valid: (value) => ROW_CURSOR.test(value), rule: '<day>/<kind>/<id>' },
      params: {
        from: () => undefined,
        to: () => undefined,
        tenant: (value) =>
          tenantParam(value) ? undefined : `must be ${TENANT_KINDS.join(' or ')}:<id>`,
      },
      order: 'rows are listed by day, then tenant',
    });
    const range = parseDayRange(page.params, Date.now());
    const tenant = tenantParam(page.params.tenant);
    if (req.accepts(['application/json', NDJSON]) === NDJSON) {
      await sendLines(req, res, this.lines(range, tenant, page.after));
      return;
    }
    const { rows, more } = await this.usage.page(range, {
      ...(tenant ? { tenant } : {}),
      ...(page.after !== undefined ? { after: page.after } : {}),
      limit: page.limit,
    });
    const last = rows.at(-1);
    const link = nextPageLink(
      req,
      raw,
      more && last ? { row: rowKeyOf(last.day, last.tenant) } : undefined,
    );
    if (link !== undefined) res.setHeader('Link', link);
    res.status(200).json(rows.map((row) => UsageRowDto.fromRow(row)));
  }

  private async *lines(
    range: { from: string; to: string },
    tenant: Tenant | undefined,
    after: string | undefined,
  ): AsyncGenerator<string> {
    const rows: AsyncIterable<UsageRow> = this.usage.allRows(range, tenant, after);
    for await (const row of rows) yield JSON.stringify(UsageRowDto.fromRow(row));
  }
}
