#!/usr/bin/env python3
"""Writes a Claude Code 2.1.x transcript heavy in hook and context attachments (issue 20).

Usage: benches/gen_hooks.py RECORDS OUT.jsonl   (RECORDS/10 Bash calls, each with 4 PreToolUse and
3 PostToolUse hook attachments, a task_reminder and a skill_listing; every 7th call has a failing
hook). 50000 records are ~29 MB. See BENCHMARKS.md "Hook-heavy Claude Code transcripts"."""
import json, base64, struct, zlib, sys
S="5f0c3c1e-1111-4a2b-9c3d-0123456789ab"
n=[0]
def base(t, **kw):
    n[0]+=1
    r={"isSidechain":False,"userType":"external","cwd":"/home/user/proj","sessionId":S,"version":"2.1.114","gitBranch":"main","type":t,
       "uuid":"00000000-0000-4000-8000-%012d"%n[0],"parentUuid":("00000000-0000-4000-8000-%012d"%(n[0]-1)) if n[0]>1 else None,
       "timestamp":"2026-04-21T12:%02d:%02d.000Z"%(n[0]//60%60,n[0]%60)}
    r.update(kw); return r
def user(text): return base("user",message={"role":"user","content":text})
def call(id,name,inp): return base("assistant",requestId="req_"+id,message={"id":"msg_"+id,"type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":id,"name":name,"input":inp}],"stop_reason":None,"usage":{"input_tokens":10,"output_tokens":5}})
def result(id,content,tur=None,err=False):
    r=base("user",message={"role":"user","content":[{"type":"tool_result","tool_use_id":id,"content":content,"is_error":err}]})
    if tur is not None: r["toolUseResult"]=tur
    return r
def att(a): return base("attachment",attachment=a)
def png(w,h,extra=b""):
    sig=b"\x89PNG\r\n\x1a\n"; ihdr=struct.pack(">IIBBBBB",w,h,8,2,0,0,0)
    ch=lambda t,d: struct.pack(">I",len(d))+t+d+struct.pack(">I",zlib.crc32(t+d)&0xffffffff)
    return sig+ch(b"IHDR",ihdr)+extra
import sys
N=int(sys.argv[1]); out=sys.argv[2]
L=[user("go")]
for c in range(N//10):
    id="toolu_M%06d"%c
    L.append(call(id,"Bash",{"command":"echo %d"%c}))
    for h in range(4):
        L.append(att({"type":"hook_success","hookName":"PreToolUse:Bash","toolUseID":id,"hookEvent":"PreToolUse","content":"","stdout":"ok %d\n"%h,"stderr":"","exitCode":0,"command":"hook.sh","durationMs":5}))
    L.append(result(id,"out %d"%c))
    for h in range(3):
        L.append(att({"type":"hook_non_blocking_error" if h==0 and c%7==0 else "hook_success","hookName":"PostToolUse:Bash","toolUseID":id,"hookEvent":"PostToolUse","stderr":"e","stdout":"","exitCode":1 if h==0 and c%7==0 else 0,"command":"post.sh","durationMs":7}))
    L.append(att({"type":"task_reminder","content":[],"itemCount":0}))
    L.append(att({"type":"skill_listing","content":"- a","isInitial":False}))
with open(out,"w") as f:
    for r in L: f.write(json.dumps(r)+"\n")
