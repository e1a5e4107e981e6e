import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  Auth,
  AuthHeadersFirst,
  BRANCH_PATTERN,
  CurrentPrincipal,
  type CustomerPrincipal,
  type Principal,
  NeedsNoScope,
  NeedsScope,
} from '../auth';
import { sendLines } from '../common/http/ndjson';
import { ApiKeysetList, nextPageLink, parseKeysetPage } from '../common/pagination/keyset-page';
import { Reply } from '../common/http/reply';
import { APP_CONFIG, type AppConfig } from '../config';
import { CollectionsService } from '../data';
import { ACCOUNT_EXPORT_MODELS, ACCOUNT_EXPORT_RESPONSE, AccountExport } from '../lifecycle';
import { MeteredAs } from '../usage';
import { BranchDto, MeDto } from './me.dto';
import { MeService } from './me.service';

type RootPrincipal = Extract<Principal, { kind: 'root' }>;

/**
 * Who am I: the principal of the request's key, its branch, the key and the quotas that apply;
 * and everything the service holds of the caller's account (GET /me/export).
 */
@ApiTags('me')
@ApiExtraModels(...ACCOUNT_EXPORT_MODELS)
@Controller('me')
export class MeController {
  constructor(
    private readonly me: MeService,
    private readonly accounts: AccountExport,
    private readonly collections: CollectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Every kind of key may ask; nothing here is secret to the key that asks. `plan` and `limits`
   * show the tenant's active plan and every limit with its use (docs/plans.md); `quota` is the
   * earlier, partial view, kept for the clients that read it.
   */
  @Get()
  @NeedsNoScope()
  @Auth('root', 'sub', 'team', 'operator')
  @ApiOkResponse({
    type: MeDto,
    example: {
      kind: 'sub',
      subject: 'auth0|ada',
      clientId: 'web-app',
      accountId: 'acct-42',
      profileId: '665f1c2a9b1e8a0012345679',
      branch: '',
      boundBranch: '',
      key: {
        id: '665f1c2a9b1e8a0012345678',
        prefix: 'pds_a1b2c3',
        name: '',
        expiresAt: null,
        scopes: ['data:read', 'profile:read'],
        collections: { orders: 'read' },
        allowedIps: null,
        lastUsedAt: '2026-01-02T03:04:05.000Z',
      },
      quota: {
        collections: { used: 3, limit: 100 },
        indexesPerCollection: 20,
        requestsPerWindow: 1000,
        windowMs: 60000,
      },
      plan: { name: 'pro', since: '2026-01-01T00:00:00.000Z', until: '2027-01-01T00:00:00.000Z' },
      limits: {
        collections: { limit: 100, used: 3 },
        indexesPerCollection: { limit: 20 },
        itemsPerCollection: { limit: 100000 },
        fileBytes: { limit: 1073741824, used: 52428800 },
        webhooks: { limit: 20, used: 1 },
        requestsPerWindow: { limit: 1000 },
        streamsPerKey: { limit: 10 },
        importBytes: { limit: 1073741824 },
      },
    },
  })
  async getMe(@CurrentPrincipal() principal: Principal): Promise<MeDto> {
    return this.me.describe(principal);
  }

  /**
   * The branches in which your namespace has collections, by name (the standard branch, '',
   * first), with how many each: the values X-Branch may take to find data. A key bound to a
   * branch lists only that one. `Link: <…>; rel="next"` while more follow.
   */
  @Get('branches')
  @NeedsScope('data:read')
  @Auth('root', 'sub', 'team')
  @ApiKeysetList(
    BranchDto,
    'branch',
    `^$|${BRANCH_PATTERN.source}`,
    'the branches named after that one',
  )
  async listBranches(
    @CurrentPrincipal() principal: CustomerPrincipal,
    @Query() raw: Record<string, unknown>,
    @Req() req: Request,
  ): Promise<Reply<BranchDto[]>> {
    const page = parseKeysetPage(raw, {
      limitDefault: this.config.limits.listDefault,
      limitMax: this.config.limits.listMax,
      cursor: {
        field: 'branch',
        valid: (value) => value === '' || BRANCH_PATTERN.test(value),
        rule: '<branch>',
      },
      order: 'branches are listed by name',
    });
    const rows = await this.collections.branches(principal, {
      limit: page.limit + 1,
      ...(page.after !== undefined ? { after: page.after } : {}),
    });
    const shown = rows.slice(0, page.limit);
    const last = shown.at(-1);
    return Reply.page(
      shown.map((row) => ({ name: row.branch, collections: row.collections })),
      nextPageLink(
        req,
        raw,
        rows.length > page.limit && last ? { branch: last.branch } : undefined,
      ),
    );
  }

  /**
   * Exports your whole account (a data-access or portability request), as the operator's GET
   * /admin/users/{subject}/export does: root and sub profiles, key metadata, projects, team
   * memberships, webhooks and the items of every collection in every branch, as NDJSON in the
   * format of GET /export, gzip when Accept-Encoding allows. Never a secret; the change feed is
   * not part of it. Root keys not bound to a branch only (an account spans every branch).
   */
  @Get('export')
  @NeedsScope('export')
  @MeteredAs('export')
  @AuthHeadersFirst({
    kinds: ['root'],
    forbidden:
      'FORBIDDEN: not a root key (sub and team keys, X-Team included), or a root key bound to a branch',
  })
  @ApiOkResponse(ACCOUNT_EXPORT_RESPONSE)
  async exportMyAccount(
    @CurrentPrincipal() principal: RootPrincipal,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await sendLines(req, res, this.accounts.ofOwnAccount(principal));
  }
}
