/**
 * openApiTools against the real Swagger Petstore documents (test/fixtures/openapi: OpenAPI 3.0,
 * swagger-api/swagger-petstore master src/main/resources/openapi.yaml, 19 operations; OpenAPI
 * 3.1, the same repository's v31 branch src/main/webapp/design-first/petstore.yaml, 6 operations
 * with 3.1's `$id` scoping and JSON Schema 2020-12 keywords), served by a Petstore on 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Toolkit, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { OpenApiDocumentError, openApiTools } from 'toolnexus-ts/openapi';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const PETSTORE_30 = readFileSync(join(__dirname, '..', 'fixtures', 'openapi', 'petstore-3.0.yaml'), 'utf8');
const PETSTORE_31 = readFileSync(join(__dirname, '..', 'fixtures', 'openapi', 'petstore-3.1.yaml'), 'utf8');

interface Request {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let baseUrl: string;
const seen: Request[] = [];
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-openapi-'));
  // A Petstore: every route answers what it was asked, as JSON.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ method: req.method, url: req.url, body: body === '' ? null : (JSON.parse(body) as unknown) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
});

const pet = { id: 7, name: 'doggie', photoUrls: ['https://pets.example/7.png'] };

/** Valid arguments for each operation of the 3.0 document, and the request each must make. */
const CALLS_30: Record<string, [Record<string, unknown>, string, string?]> = {
  updatePet: [{ body: pet }, 'PUT /api/v3/pet', JSON.stringify(pet)],
  addPet: [{ body: pet }, 'POST /api/v3/pet', JSON.stringify(pet)],
  findPetsByStatus: [{ status: 'sold' }, 'GET /api/v3/pet/findByStatus?status=sold'],
  findPetsByTags: [{ tags: ['a', 'b'] }, 'GET /api/v3/pet/findByTags?tags=a&tags=b'],
  getPetById: [{ petId: 7 }, 'GET /api/v3/pet/7'],
  updatePetWithForm: [{ petId: 7, name: 'rex', status: 'sold' }, 'POST /api/v3/pet/7?name=rex&status=sold'],
  deletePet: [{ petId: 7, api_key: 'k-1' }, 'DELETE /api/v3/pet/7'],
  uploadFile: [{ petId: 7, additionalMetadata: 'm' }, 'POST /api/v3/pet/7/uploadImage?additionalMetadata=m'],
  getInventory: [{}, 'GET /api/v3/store/inventory'],
  placeOrder: [{ body: { id: 1, petId: 7, quantity: 2, status: 'placed' } }, 'POST /api/v3/store/order'],
  getOrderById: [{ orderId: 1 }, 'GET /api/v3/store/order/1'],
  deleteOrder: [{ orderId: 1 }, 'DELETE /api/v3/store/order/1'],
  createUser: [{ body: { username: 'ada' } }, 'POST /api/v3/user'],
  createUsersWithListInput: [{ body: [{ username: 'ada' }, { username: 'bob' }] }, 'POST /api/v3/user/createWithList'],
  loginUser: [{ username: 'ada', password: 'pw' }, 'GET /api/v3/user/login?username=ada&password=pw'],
  logoutUser: [{}, 'GET /api/v3/user/logout'],
  getUserByName: [{ username: 'ada lovelace' }, 'GET /api/v3/user/ada%20lovelace'],
  updateUser: [{ username: 'ada', body: { username: 'ada', email: 'ada@example.com' } }, 'PUT /api/v3/user/ada'],
  deleteUser: [{ username: 'ada' }, 'DELETE /api/v3/user/ada'],
};

describe('openApiTools on the Petstore (OpenAPI 3.0)', () => {
  it('makes every operation a tool, each callable with valid arguments, making the request the document describes', async () => {
    const warnings: string[] = [];
    const tools = await openApiTools(PETSTORE_30, { baseUrl, approval: false, onWarning: (m) => warnings.push(m) });
    const toolkit = new Toolkit().register(...tools);
    expect(
      toolkit
        .tools()
        .map((t) => t.name)
        .sort(),
    ).toEqual(Object.keys(CALLS_30).sort());
    for (const [name, [args, request, body]] of Object.entries(CALLS_30)) {
      const result = await toolkit.execute(name, args);
      expect([name, result.isError, result.output.slice(0, 0)]).toEqual([name, false, '']);
      const last = seen[seen.length - 1];
      expect([name, `${last?.method} ${last?.url}`]).toEqual([name, request]);
      if (body !== undefined) expect(last?.body).toBe(body);
    }
    expect(seen.find((r) => r.method === 'DELETE' && r.url === '/api/v3/pet/7')?.headers.api_key).toBe('k-1');
    expect(warnings).toEqual(['uploadFile: its request body is not JSON (application/octet-stream), so it sends none']);
  });

  it('shows the model the schema it validates, and refuses invalid arguments before any request', async () => {
    const toolkit = new Toolkit().register(...(await openApiTools(PETSTORE_30, { baseUrl, approval: false, onWarning: () => undefined })));
    const getPet = toolkit.tools().find((t) => t.name === 'getPetById');
    expect(getPet?.inputSchema).toMatchObject({
      type: 'object',
      required: ['petId'],
      properties: { petId: { type: 'integer' } },
      additionalProperties: false,
    });
    expect(getPet?.description).toBe('Find pet by ID.\n\nReturns a single pet.');
    const refusals = [
      ['getPetById', { petId: 'seven' }, 'invalid arguments for getPetById: petId: petId must be an integer'],
      ['addPet', { body: { name: 'no photos' } }, "invalid arguments for addPet: args/body must have required property 'photoUrls'"],
      [
        'findPetsByStatus',
        { status: 'lost' },
        'invalid arguments for findPetsByStatus: args/status must be equal to one of the allowed values',
      ],
      ['addPet', {}, 'invalid arguments for addPet: body: body is required'],
    ] as const;
    for (const [name, args, message] of refusals) {
      const result = await toolkit.execute(name, args);
      expect([name, result.isError]).toEqual([name, true]);
      expect(result.output).toContain(message);
    }
    expect(seen).toHaveLength(0);
  });

  it('asks before a DELETE by default, and deletes once, after the approval, from a durable store', async () => {
    const tools = await openApiTools(PETSTORE_30, { baseUrl, include: ['deletePet', 'getPetById'] });
    expect(tools.map((t) => t.name)).toEqual(['getPetById', 'deletePet']);
    const toolkit = new Toolkit().register(...tools);
    const store = new SqliteStore({ filename: join(dir, 'approvals.db') });
    try {
      const coordinator = new ResumeCoordinator({ toolkit, store });
      expect((await coordinator.execute('getPetById', { petId: 7 })).isError).toBe(false);
      const asked = await coordinator.execute('deletePet', { petId: 7 });
      const request = pendingOf(asked);
      expect(request).toMatchObject({ kind: 'approval', prompt: 'DELETE /pet/{petId} (deletePet)?' });
      expect(seen.map((r) => r.method)).toEqual(['GET']);
      const [first, second] = await Promise.all([
        coordinator.resolve({ id: request!.id, ok: true }),
        coordinator.resolve({ id: request!.id, ok: true }),
      ]);
      expect(first).toEqual(second);
      expect(first.isError).toBe(false);
      expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /api/v3/pet/7', 'DELETE /api/v3/pet/7']);
    } finally {
      await store.close();
    }
  });
});

describe('openApiTools on the Petstore (OpenAPI 3.1)', () => {
  it('reads 3.1 (JSON Schema 2020-12, $id scoping left out and told), each operation callable and validated', async () => {
    const warnings: string[] = [];
    const toolkit = new Toolkit().register(
      ...(await openApiTools(PETSTORE_31, { baseUrl, approval: false, onWarning: (m) => warnings.push(m) })),
    );
    expect(
      toolkit
        .tools()
        .map((t) => t.name)
        .sort(),
    ).toEqual(['addPet', 'deletePet', 'findPetsByStatus', 'findPetsByTags', 'getPetById', 'updatePet']);
    const calls: Array<[string, Record<string, unknown>, string]> = [
      ['updatePet', { body: pet }, 'PUT /api/v3/pet'],
      ['addPet', { body: pet }, 'POST /api/v3/pet'],
      ['findPetsByStatus', { status: 'pending' }, 'GET /api/v3/pet/findByStatus?status=pending'],
      ['findPetsByTags', { tags: ['x'] }, 'GET /api/v3/pet/findByTags?tags=x'],
      ['getPetById', { petId: 3 }, 'GET /api/v3/pet/3'],
      ['deletePet', { petId: 3 }, 'DELETE /api/v3/pet/3'],
    ];
    for (const [name, args, request] of calls) {
      expect([name, (await toolkit.execute(name, args)).isError]).toEqual([name, false]);
      expect(`${seen[seen.length - 1]?.method} ${seen[seen.length - 1]?.url}`).toBe(request);
    }
    // 2020-12's numeric exclusiveMaximum: availableInstances must be below 10.
    const tooMany = await toolkit.execute('addPet', { body: { ...pet, availableInstances: 10 } });
    expect(tooMany.output).toContain('args/body/availableInstances must be < 10');
    expect(warnings).toContain(
      'a $ref to "/components/schemas/petdetails#pet_details_id" points outside the document: that schema accepts anything',
    );
  });
});

describe('openApiTools: documents it refuses', () => {
  it('refuses what is not OpenAPI 3, a document over its bound, a relative server without baseUrl', async () => {
    await expect(openApiTools('swagger: "2.0"\ninfo: {}', {})).rejects.toThrow('openApiTools reads OpenAPI 3.0 and 3.1 documents');
    await expect(openApiTools('{ not json', {})).rejects.toBeInstanceOf(OpenApiDocumentError);
    await expect(openApiTools(PETSTORE_30, { maxDocumentBytes: 100 })).rejects.toThrow(
      'the OpenAPI document is larger than maxDocumentBytes (100 bytes)',
    );
    const relative = { openapi: '3.0.3', info: { title: 't', version: '1' }, servers: [{ url: '/api/v3' }], paths: {} };
    await expect(openApiTools(relative, {})).rejects.toThrow(
      'openApiTools needs an absolute baseUrl: the document\'s first server is "/api/v3"',
    );
    await expect(openApiTools(PETSTORE_30, { baseUrl, maxOperations: 3, onWarning: () => undefined })).rejects.toThrow(
      'more than 3 operations',
    );
    const error = await openApiTools('[1]', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TOOLNEXUS_OPENAPI_DOCUMENT', name: 'OpenApiDocumentError' });
  });

  it('never fetches a $ref from a file or URL', async () => {
    const document = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      servers: [{ url: baseUrl }],
      paths: { '/x': { get: { operationId: 'x', parameters: [{ name: 'q', in: 'query', schema: { $ref: `${baseUrl}/evil.json` } }] } } },
    };
    const warnings: string[] = [];
    const tools = await openApiTools(document, { onWarning: (m) => warnings.push(m) });
    expect(tools).toHaveLength(1);
    expect(seen).toHaveLength(0);
    expect(warnings).toEqual([`a $ref to "${baseUrl}/evil.json" points outside the document: that schema accepts anything`]);
  });
});

describe('openApiTools: path parameters stay inside their segment (issue 45)', () => {
  const document = {
    openapi: '3.0.3',
    info: { title: 'files', version: '1' },
    paths: {
      '/tenants/{tenant}/files/{file}': {
        get: {
          operationId: 'readFile',
          parameters: [
            { name: 'tenant', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'file', in: 'path', required: true, schema: { type: 'string' } },
          ],
          responses: { '200': { description: 'the file' } },
        },
      },
    },
  };

  it('refuses `.` and `..`, raw or percent-encoded (the GET needs no approval, so nothing else stops it), and never sends it', async () => {
    const toolkit = new Toolkit().register(...(await openApiTools(document, { baseUrl: `${baseUrl}/api` })));
    for (const tenant of ['..', '.', '%2e%2e', '%2E.', '.%2e']) {
      const result = await toolkit.execute('readFile', { tenant, file: 'payroll' });
      expect(result.isError).toBe(true);
      expect(result.output).toContain('the path parameter tenant may not be "." or ".."');
    }
    expect(seen).toEqual([]);
    const kept = await toolkit.execute('readFile', { tenant: 'a/../b', file: 'payroll' });
    expect(kept.isError).toBe(false);
    expect(seen.map((s) => s.url)).toEqual(['/api/v3/api/tenants/a%2F..%2Fb/files/payroll']);
  });
});
