"""The val sweep that chose the closed-form encoder's settings (docs/results.md, "The
encoder class's optimum"): numpy, independent of prh. Per language, a bag of words (the V
most frequent \w+ tokens of the Multi30k training captions, optionally idf-weighted,
L2-normalised), C and C+ over all caption pairs of each training image, then the spectral
loss's closed form W = C_r^-1/2 U_d Lambda_d^p with C_r = C + ridge tr(C)/V I. Scored on
val: English vs German mutual 10-NN of caption 1 (en-de), and caption 1 vs 2 within each
language. Nothing reads test_2016.
  python3 val_sweep.py 2000 0 val     # V = 2000, raw counts
  python3 val_sweep.py 4000 1 val     # V = 4000, idf-weighted (the chosen setting's row)
Data: PRH_DATA or ../shared/data. Moments are cached in the working directory.
"""
import gzip, re, numpy as np, sys, collections, os
D=os.path.join(os.environ.get('PRH_DATA','../shared/data'),'multi30k/task2/raw/')
def load(split, lang):
    return [[l.strip().lower() for l in gzip.open(f'{D}{split}.{i}.{lang}.gz','rt')] for i in range(1,6)]
tok=lambda s: re.findall(r"\w+", s)
def vocab(caps, V):
    c=collections.Counter(w for cs in caps for s in cs for w in tok(s))
    return {w:i for i,(w,_) in enumerate(c.most_common(V))}
def feats(sents, voc, idf=None):
    X=np.zeros((len(sents),len(voc)),np.float32)
    for r,s in enumerate(sents):
        for w in tok(s):
            j=voc.get(w)
            if j is not None: X[r,j]+=1
    if idf is not None: X*=idf
    n=np.linalg.norm(X,axis=1,keepdims=True); n[n==0]=1
    return X/n
def knn(X,k):
    X=X/np.linalg.norm(X,axis=1,keepdims=True); S=X@X.T; np.fill_diagonal(S,-np.inf)
    return np.argsort(-S,axis=1)[:,:k]
def mknn(A,B,k=10):
    a,b=knn(A,k),knn(B,k); return np.mean([len(set(x)&set(y))/k for x,y in zip(a,b)])
def idf_weights(tr, voc):
    """Smoothed idf over all training captions: ln((1+n)/(1+df)) + 1 (scikit-learn's)."""
    df=np.zeros(len(voc))
    for cs in tr:
        for s in cs:
            for j in {voc[w] for w in tok(s) if w in voc}: df[j]+=1
    n=5*len(tr[0]); return (np.log((1+n)/(1+df))+1).astype(np.float32)
def features_as(mode, sents, voc, idf):
    """tfidf: idf-weighted L2-normalised counts (feats); mean: counts / caption length (a
    bag of embeddings without LayerNorm); l2: L2-normalised counts, no idf."""
    if mode=='tfidf': return feats(sents,voc,idf)
    X=np.zeros((len(sents),len(voc)),np.float32)
    for r,s in enumerate(sents):
        ws=tok(s)
        for w in ws:
            j=voc.get(w)
            if j is not None: X[r,j]+=1
        if mode=='mean': X[r]/=max(len(ws),1)
        elif mode=='l2': X[r]/=max(np.linalg.norm(X[r]),1e-9)
        else: raise ValueError(f'unknown MODE {mode}: tfidf, mean or l2')
    return X
def pair_moments(F):
    """F: one [n, V] feature block per caption slot (5), row i of each = image i. Returns
    mu, C (covariance of all captions) and C+ (mean cross-covariance over the 20 ordered
    pairs of distinct captions of one image)."""
    allf=np.concatenate(F); mu=allf.mean(0); C=np.cov(allf.T,bias=True)
    S=sum(F); Cp=((S-5*mu).T@(S-5*mu) - sum((f-mu).T@(f-mu) for f in F))/len(F[0])/20
    return mu,C,Cp
def spectral_head(C,Cp,ridge):
    """The spectral loss's closed form: (C_r^-1/2 U, lambda) with U, lambda the eigenpairs
    of C_r^-1/2 C+ C_r^-1/2 sorted decreasingly, C_r = C + ridge tr(C)/V I."""
    C2=C+ridge*np.trace(C)/len(C)*np.eye(len(C))
    w,U=np.linalg.eigh(C2); W=U@np.diag(w**-0.5)@U.T
    ev,Ev=np.linalg.eigh(W@Cp@W); o=np.argsort(-ev); return W@Ev[:,o],ev[o]
def moments(lang,V,idfw):
    fn=f'mom_{lang}_{V}_{idfw}.npz'
    if os.path.exists(fn):
        z=np.load(fn,allow_pickle=True); return z['voc'].item(),z['mu'],z['C'],z['Cp'],z['idf']
    tr=load('train',lang); voc=vocab(tr,V)
    idf=idf_weights(tr,voc) if idfw else None
    mu,C,Cp=pair_moments([feats(c,voc,idf) for c in tr])
    np.savez(fn,voc=voc,mu=mu,C=C,Cp=Cp,idf=idf if idf is not None else np.ones(len(voc)))
    return voc,mu,C,Cp,(idf if idf is not None else np.ones(len(voc),np.float32))
V=int(sys.argv[1]); idfw=int(sys.argv[2]); split=sys.argv[3]
res={}
for lang in ['en','de']:
    voc,mu,C,Cp,idf=moments(lang,V,idfw)
    te=load(split,lang); X=[feats(c,voc,idf)-mu for c in te]
    res[lang]=(C,Cp,X)
for ridge in [1e-3,1e-2,1e-1]:
  ops={}
  for lang in res:
    C,Cp,X=res[lang]; ops[lang]=spectral_head(C,Cp,ridge)
  for d in [32,64,96,128]:
    for p in [0.5,1,2]:
        E={l:[x@ops[l][0][:,:d]*np.maximum(ops[l][1][:d],0)**p for x in res[l][2]] for l in res}
        en,de=E['en'],E['de']
        print(f'V={V} idf={idfw} ridge={ridge} d={d} p={p} {split}: en-de {mknn(en[0],de[0]):.3f} en12 {mknn(en[0],en[1]):.3f} de12 {mknn(de[0],de[1]):.3f}',flush=True)
