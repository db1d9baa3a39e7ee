/**
 * The console's settings (DESIGN.md section 9): the team's settings (what a deactivated user
 * looks like to SCIM clients; the name only the operator changes) and the admin's own password,
 * whose change ends every session of theirs, this one included; whether the team requires a
 * second factor of its admins (its switch posts to security.ts). Handlers parse the form, call one
 * function of admin.ts or console/directory.ts, and reply.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, parseDeactivatedUsers, updateTeam } from '../../admin.ts';
import { budgetViews } from '../../budgets.ts';
import { changeOwnPassword } from '../../console/directory.ts';
import { requirementSection } from '../../console/factors-views.ts';
import * as views from '../../console/views.ts';
import { signIn } from '../../oauth/accounts.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { ScimError } from '../../scim/errors.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

export function settingsRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, shell, signedIn, signed, show } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };

  const settings = (request: FastifyRequest, reply: FastifyReply, message?: string, error?: string, status = 200) => {
    const { team } = signed(request);
    const body = views.settingsBody(reply.generateCsrf(), { name: team.name, deactivatedUsers: team.deactivated_users, budgets: budgetViews(team) }, message, error);
    return show(request, reply, 'settings', 'Settings', body + requirementSection(reply.generateCsrf(), team.require_second_factor === 1), status);
  };

  app.get('/console/settings', { preHandler: signedIn }, async (request, reply) => settings(request, reply, field(request.query, 'saved') ? 'Saved.' : undefined));

  app.post('/console/settings/team', post, async (request, reply) => {
    const s = signed(request);
    try {
      const deps = { storage: ctx.storage, clock: ctx.clock, baseUrl: kit.baseUrl };
      const mode = parseDeactivatedUsers(field(request.body, 'deactivatedUsers'));
      // Team names are shared by every team (sign-in picks the team by its name): a team admin
      // renaming would learn which names exist and take the free ones. Only the operator renames
      // (`rollcall team rename`); any other name gets one answer, whichever name it is.
      const name = field(request.body, 'name');
      if (name !== '' && name !== s.team.name) throw new AdminError('The operator renames a team (rollcall team rename); a team admin cannot.');
      if (mode !== s.team.deactivated_users) await updateTeam(deps, s.team.name, mode, s.scim.actor);
    } catch (error) {
      if (error instanceof AdminError) return settings(request, reply, undefined, error.message, 400);
      throw error;
    }
    return shell.seeOther(reply, '/console/settings?saved=1');
  });

  app.post('/console/settings/password', post, async (request, reply) => {
    const s = signed(request);
    try {
      // The current password is checked like a sign-in (same limits; a wrong one is audited).
      await signIn(ctx, s.user.user_name, field(request.body, 'current'), { clientId: null, requestId: request.id, method: 'form', address: request.ip, teamName: s.team.name, signedInTeamId: s.team.id });
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_grant') return settings(request, reply, undefined, 'The current password is not right.', 400);
      throw error;
    }
    try {
      await changeOwnPassword(s.scim, s.user.id, field(request.body, 'password'));
    } catch (error) {
      if (error instanceof ScimError && error.status === 400) return settings(request, reply, undefined, error.message, 400);
      throw error;
    }
    // The password change ended every session of the user already; the cookie goes too.
    shell.forget(reply);
    return shell.seeOther(reply, '/console/sign-in?ended=1');
  });
}
