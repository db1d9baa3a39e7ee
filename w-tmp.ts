import { buildApp } from './src/app.ts';
import { systemClock } from './src/clock.ts';
import { issueAccessToken } from './src/oauth/tokens.ts';
import { connect } from './src/storage/connect.ts';
import { sql } from './node_modules/kysely/dist/index.js';
const storage = connect(process.argv[2]!);
const team = (await sql<{ id: string }>`select id from teams where name = 'scale'`.execute(storage.db)).rows[0]!.id;
const app = await buildApp({ config: { publicBaseUrl: 'http://127.0.0.1', logLevel: 'silent', accessTokenTtl: 3600, refreshTokenTtl: 86_400, passwordGrant: true, redisUrl: undefined, secretKey: process.env.SECRET_KEY }, storage });
const token = (await issueAccessToken(storage.db, systemClock, { teamId: team, userId: null, clientId: null, scope: ['read'], ttlSeconds: 600 })).token;
const queries: string[] = [];
const origExec = storage.db.getExecutor();
for (const f of ['urn:rollcall:params:scim:schemas:extension:Bench:2.0:User:badge eq "b-0123456"']) {
  const t = performance.now();
  const res = await app.inject({ method: 'GET', url: `/v2/scim/Users?filter=${encodeURIComponent(f)}&attributes=userName`, headers: { authorization: `Bearer ${token}` } });
  console.log(res.statusCode, (performance.now() - t).toFixed(0), 'ms', res.body.slice(0, 200));
}
await app.close(); await storage.close();
