// An OTLP/gRPC trace receiver for the webhook bench: kube-apiserver (--tracing-config-file) exports
// its spans here, and the bench keeps the duration of every "Call mutating webhook" span of the
// pod webhook — the apiserver's own, exact measure of what each call added to a create (encoding
// the review, the HTTP call, the agent, decoding the answer and applying the patch), where its
// metric only has 5/25/100 ms buckets. Only the few OTLP fields read here are declared; protobuf
// skips the others.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO = `
syntax = "proto3";
package opentelemetry.proto.collector.trace.v1;
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message KeyValue { string key = 1; AnyValue value = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse {}
service TraceService { rpc Export(ExportTraceServiceRequest) returns (ExportTraceServiceResponse) {} }
`;

interface WireSpan {
  spanId: Buffer;
  parentSpanId: Buffer;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value?: { stringValue?: string } }[];
}
interface WireRequest {
  resourceSpans: { scopeSpans: { spans: WireSpan[] }[] }[];
}

/** One webhook call as the apiserver traced it: start (ms since the epoch) and duration (ms). */
export interface WebhookCallSpan {
  startMs: number;
  durationMs: number;
  /**
   * The HTTP request inside the call (the apiserver's client span, "HTTP POST"): from sending the
   * review to reading the answer, in ms. The rest of the call is the apiserver's own work:
   * encoding the review, decoding the answer, applying the patch.
   */
  httpMs?: number;
  /** When that HTTP request started, ms since the epoch. */
  httpStartMs?: number;
}

export interface TraceReceiver {
  /** host:port for the apiserver's TracingConfiguration. */
  endpoint: string;
  /** The apiserver's --tracing-config-file (`samplingRatePerMillion` of the requests sampled). */
  configFile: string;
  /** Webhook-call spans of `webhook` received so far. */
  calls(): WebhookCallSpan[];
  /** Spans received in all (any name). */
  received(): number;
  close(): Promise<void>;
}

export async function startTraceReceiver(webhook: string, samplingRatePerMillion = 1_000_000): Promise<TraceReceiver> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'whbench-trace-'));
  const protoFile = path.join(dir, 'trace.proto');
  writeFileSync(protoFile, PROTO);
  const definition = protoLoader.loadSync(protoFile, { longs: String, defaults: true, oneofs: false });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    opentelemetry: { proto: { collector: { trace: { v1: { TraceService: { service: grpc.ServiceDefinition } } } } } };
  };
  const calls: WebhookCallSpan[] = [];
  /** Calls by span id, and HTTP client spans by their parent's: either may arrive first. */
  const callsById = new Map<string, WebhookCallSpan>();
  const httpByParent = new Map<string, { startMs: number; durationMs: number }>();
  let received = 0;
  const server = new grpc.Server();
  server.addService(pkg.opentelemetry.proto.collector.trace.v1.TraceService.service, {
    Export: (call: grpc.ServerUnaryCall<WireRequest, object>, callback: grpc.sendUnaryData<object>) => {
      for (const rs of call.request.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const span of ss.spans) {
            received++;
            const start = BigInt(span.startTimeUnixNano);
            const end = BigInt(span.endTimeUnixNano);
            const durationMs = Number(end - start) / 1e6;
            const startMs = Number(start / 1000n) / 1000;
            if (span.name === 'HTTP POST') {
              const parent = span.parentSpanId.toString('hex');
              const call = callsById.get(parent);
              if (call) Object.assign(call, { httpMs: durationMs, httpStartMs: startMs });
              else httpByParent.set(parent, { startMs, durationMs });
              continue;
            }
            if (span.name !== 'Call mutating webhook') continue;
            if (!span.attributes.some((a) => a.key === 'webhook' && a.value?.stringValue === webhook)) continue;
            const id = span.spanId.toString('hex');
            const call: WebhookCallSpan = { startMs, durationMs };
            const http = httpByParent.get(id);
            if (http) {
              Object.assign(call, { httpMs: http.durationMs, httpStartMs: http.startMs });
              httpByParent.delete(id);
            }
            calls.push(call);
            callsById.set(id, call);
          }
      callback(null, {});
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  const endpoint = `127.0.0.1:${port}`;
  const configFile = path.join(dir, 'tracing.yaml');
  writeFileSync(
    configFile,
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: TracingConfiguration',
      `endpoint: ${endpoint}`,
      `samplingRatePerMillion: ${samplingRatePerMillion}`,
      '',
    ].join('\n'),
  );
  return {
    endpoint,
    configFile,
    calls: () => calls,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
